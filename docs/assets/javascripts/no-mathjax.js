// Stands in for MathJax on notebook pages. nbconvert's template loads MathJax from a CDN
// on every notebook page; the guide has no formulas and makes no request off the machine,
// so mkdocs.yml points the notebook pages' MathJax URL here instead.
