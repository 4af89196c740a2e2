"""The static reading of a page's <article> finds every picture the browser would measure.

The picture checks (test_images) load in Chromium only the pages where
`tests.docs.article.may_draw` finds something: it must find each kind of picture they
measure, and nothing that only names one.
"""

from __future__ import annotations

import pytest

from tests.docs.article import may_draw

PAGE = """<!doctype html><html><head>
<style>.mermaid {{ color: red }} /* <img src=x> */</style>
<script>document.write("<svg></svg>")</script></head>
<body><header><img src="logo.png" alt="logo"><svg class="icon"></svg></header>
<article class="md-content__inner"><h1>Title</h1>
<style>.jp-RenderedMermaid, pre.mermaid {{ display: block }}</style>
<p>A mermaid, an &lt;img&gt; and <code>role="img"</code> named in text.</p><!-- <img> -->
{inside}
</article>
<footer><div class="mermaid"></div><span role="img" aria-label="x"></span></footer>
</body></html>"""


def test_a_page_naming_pictures_only_in_text_or_outside_its_article_has_none() -> None:
    assert may_draw(PAGE.format(inside="")) == []


@pytest.mark.parametrize(
    "inside",
    [
        '<img src="a.png" alt="a">',
        "<p><img src=a.png /></p>",
        '<svg viewBox="0 0 10 10"><text>a</text></svg>',
        '<pre class="mermaid"><code>stateDiagram-v2</code></pre>',
        '<div class="diagram mermaid"></div>',
        '<span role="img" aria-label="a card"></span>',
        "<script>document.body.append(new Image())</script>",
        "<article><img src=a.png></article>",
    ],
)
def test_each_picture_inside_the_article_is_found(inside: str) -> None:
    assert len(may_draw(PAGE.format(inside=inside))) == 1


def test_a_page_without_an_article_is_not_taken_for_one_without_pictures() -> None:
    with pytest.raises(ValueError, match="no <article>"):
        may_draw("<html><body><img src=a.png></body></html>")
