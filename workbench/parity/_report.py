"""The report: a summary table for the terminal, and the whole comparison as Markdown and HTML.

The HTML page is self-contained (its style inline, no script, no request off the page),
so it can be attached to a CI run or a bug report and opened anywhere.
"""

from __future__ import annotations

import functools

import jinja2

from workbench.parity._compare import Difference, FlowResult, ParityReport, Step

__all__ = ["progress_line", "render_html", "render_markdown", "summary_table"]

_COLUMNS = ("flow", "steps A/B", "same", "differ", "only A", "only B", "skipped", "result")


def _row(flow: FlowResult) -> tuple[str, ...]:
    return (
        flow.name,
        f"{flow.steps_a}/{flow.steps_b}",
        str(flow.count("same")),
        str(flow.count("differs")),
        str(flow.count("only in A")),
        str(flow.count("only in B")),
        str(flow.count("skipped")),
        flow.result,
    )


def _totals(report: ParityReport) -> tuple[str, ...]:
    flows = report.flows
    n = len(report.differences)
    return (
        "total",
        f"{sum(f.steps_a for f in flows)}/{sum(f.steps_b for f in flows)}",
        *(
            str(sum(f.count(o) for f in flows))
            for o in ("same", "differs", "only in A", "only in B", "skipped")
        ),
        f"{n} difference{'s' if n != 1 else ''}" if n else "same",
    )


def _verdict(report: ParityReport) -> str:
    n = len(report.differences)
    flows = sum(1 for f in report.flows if f.differences)
    head = (
        f"{n} difference{'s' if n != 1 else ''} in {flows} flow{'s' if flows != 1 else ''}"
        if n
        else "no differences"
    )
    return f"{head}; {report.skipped} step{'s' if report.skipped != 1 else ''} skipped"


def progress_line(index: int, total: int, flow: FlowResult) -> str:
    """The line printed as soon as one flow has run on both targets."""
    return (
        f"[{index}/{total}] {flow.name:<20} A {flow.steps_a:>2} steps · "
        f"B {flow.steps_b:>2} steps · {flow.result}"
    )


def summary_table(report: ParityReport) -> str:
    """The terminal summary: one row per flow, a total, then every difference on a line."""
    rows = [_COLUMNS, *(_row(f) for f in report.flows), _totals(report)]
    widths = [max(len(r[c]) for r in rows) for c in range(len(_COLUMNS))]

    def line(row: tuple[str, ...]) -> str:
        cells = [
            cell.ljust(widths[c]) if c in (0, len(row) - 1) else cell.rjust(widths[c])
            for c, cell in enumerate(row)
        ]
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w for w in widths)
    out = [f"A: {report.a}", f"B: {report.b}", "", line(rows[0]), rule]
    out += [line(r) for r in rows[1:-1]]
    out += [rule, line(rows[-1]), "", f"Parity: {_verdict(report)}."]
    if report.differences:
        out.append("")
        out += [f"  {d.describe()}" for d in report.differences]
    notes = [f"  {f.name}: {note}" for f in report.flows for note in f.notes]
    if notes:
        out += ["", "Skipped, with the reason:", *notes]
    return "\n".join(out)


def _cell(text: str) -> str:
    """Text in a table row: one line, its pipes escaped."""
    return text.replace("|", "\\|").replace("\n", " ")


def _md(text: str) -> str:
    """Plain text: placeholders such as ``<pay:1>`` must not read as HTML or autolinks."""
    return _cell(text).replace("<", "&lt;").replace(">", "&gt;")


def _code(text: str) -> str:
    if not text or text == "—":
        return text or ""
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{_cell(text)}{pad}{fence}"


def _differences_table(differences: list[Difference]) -> list[str]:
    rows = ["| flow | step | request | field | kind | A | B |", "|---|---|---|---|---|---|---|"]
    rows += [
        f"| {d.flow} | {d.step} | {_code(d.request)} | {_code(d.field)} | {d.kind} "
        f"| {_code(d.a)} | {_code(d.b)} |"
        for d in differences
    ]
    return rows


def _outcome(step: Step) -> str:
    """A step's outcome cell: the outcome, then the reason or each difference."""
    details = [_md(step.reason)] if step.reason else []
    details += [
        f"{_code(d.field)} ({d.kind}): A {_code(d.a)}, B {_code(d.b)}"
        for d in step.differences
        if not d.kind.startswith("step only")
    ]
    return step.outcome + (": " + "; ".join(details) if details else "")


def render_markdown(report: ParityReport) -> str:
    """The whole report as Markdown: summary, every difference, then each flow step by step."""
    out = ["# Parity report", "", f"- **A**: {report.a}", f"- **B**: {report.b}",
           f"- **Result**: {_verdict(report)}", "", "## Summary", ""]  # fmt: skip
    out.append("| " + " | ".join(_COLUMNS) + " |")
    out.append("|" + "---|" * len(_COLUMNS))
    out += ["| " + " | ".join(_md(c) for c in _row(f)) + " |" for f in report.flows]
    out.append("| " + " | ".join(f"**{_md(c)}**" for c in _totals(report)) + " |")
    if report.differences:
        out += ["", "## Differences", "", *_differences_table(report.differences)]
    for flow in report.flows:
        out += ["", f"## {flow.name}: {flow.result}", ""]
        out += [f"> {_md(note)}" for note in flow.notes]
        if flow.notes:
            out.append("")
        if flow.steps:
            out += ["| step A/B | request | status A/B | outcome |", "|---|---|---|---|"]
            for s in flow.steps:
                status = f"{s.status_a or '—'}/{s.status_b or '—'}"
                numbers = f"{s.step_a or '—'}/{s.step_b or '—'}"
                out.append(f"| {numbers} | {_code(s.request)} | {status} | {_outcome(s)} |")
        whole = [d for d in flow.differences if not d.step]
        if whole:
            out += [""]
            out += [f"- {_code(d.field)} ({d.kind}): A {_code(d.a)}, B {_code(d.b)}" for d in whole]
    return "\n".join(out) + "\n"


@functools.cache
def _templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("workbench.parity", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render_html(report: ParityReport) -> str:
    """The whole report as one self-contained HTML page (inline style, no script)."""
    template = _templates().get_template("report.html")
    rows = [_row(f) for f in report.flows]
    return template.render(
        report=report,
        columns=_COLUMNS,
        rows=rows,
        totals=_totals(report),
        verdict=_verdict(report),
    )
