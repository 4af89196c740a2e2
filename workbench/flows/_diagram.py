"""State diagrams drawn without any script or CDN: an inline SVG and a transitions table.

A notebook page of the guide must load nothing from off the machine, so the
diagrams here are plain SVG (the observed path of one object) and a DataFrame of
a machine's transitions; the guide's state-machines page has the full drawings.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from workbench.spec.states import StateMachine

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["StatePath", "transitions"]

_BOX_W = 118
_BOX_H = 34
_GAP = 92
_PAD = 10
#: 13 px: drawn at its own size, never below the guide's 11 px minimum for a picture's text.
_FONT = "font-family='sans-serif' font-size='13'"


@dataclass(frozen=True, slots=True)
class StatePath:
    """The states one object went through, each reached by an action.

    Shown in a notebook as HTML that wraps to the page's width (`html`), one drawing per
    step; `svg` draws it as one picture. Its text form is
    ``(new) --charge--> captured --refund--> captured``.
    """

    steps: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        if not self.steps:
            return "(no state observed)"
        parts = ["(new)"]
        for action, state in self.steps:
            parts.append(f"--{action}--> {state}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return self.html()

    def html(self) -> str:
        """The path as HTML: one small drawing per step, wrapping to the width it is shown in.

        Each step (an arrow labelled with its action, then a box with the state reached)
        is its own SVG at its own size, so the text is drawn at its font size on a phone
        as on a desktop, never shrunk to fit; the whole has the text form as its label.
        """
        label = escape(f"State path: {self}", quote=True)
        height = _BOX_H + 18 + _PAD
        mid = _PAD + 18 + _BOX_H // 2
        out = [
            f"<div class='wb-state-path' role='img' aria-label='{label}' "
            "style='display:flex;flex-wrap:wrap;align-items:flex-start;row-gap:4px'>",
            f"<svg xmlns='http://www.w3.org/2000/svg' width='24' height='{height}' "
            f"aria-hidden='true'><circle cx='12' cy='{mid}' r='7' fill='#333'/></svg>",
        ]
        width = _GAP + _BOX_W + 2
        for action, state in self.steps:
            head = f"{_GAP - 10},{mid - 4} {_GAP - 2},{mid} {_GAP - 10},{mid + 4}"
            out.append(
                f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
                f"viewBox='0 0 {width} {height}' aria-hidden='true'>"
                f"<line x1='0' y1='{mid}' x2='{_GAP - 4}' y2='{mid}' stroke='#555' "
                "stroke-width='1.5'/>"
                f"<polygon points='{head}' fill='#555'/>"
                f"<text x='{_GAP // 2}' y='{mid - 8}' text-anchor='middle' {_FONT} "
                f"fill='#333'>{escape(action)}</text>"
                f"<rect x='{_GAP}' y='{mid - _BOX_H // 2}' width='{_BOX_W}' height='{_BOX_H}' "
                "rx='8' fill='#e0f2f1' stroke='#00796b'/>"
                f"<text x='{_GAP + _BOX_W // 2}' y='{mid + 4}' text-anchor='middle' {_FONT} "
                f"fill='#004d40'>{escape(state)}</text></svg>"
            )
        out.append("</div>")
        return "".join(out)

    def svg(self) -> str:
        """The path as an SVG drawing: a start dot, then one box per state, arrows labelled."""
        count = len(self.steps)
        width = _PAD * 2 + 16 + count * (_GAP + _BOX_W)
        height = _PAD * 2 + _BOX_H + 18
        mid = _PAD + 18 + _BOX_H // 2
        out = [
            f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
            f"viewBox='0 0 {width} {height}' role='img' aria-label='{escape(str(self))}'>",
            "<defs><marker id='arrow' markerWidth='8' markerHeight='8' refX='8' refY='4' "
            "orient='auto'><path d='M0,0 L8,4 L0,8 z' fill='#555'/></marker></defs>",
            f"<circle cx='{_PAD + 8}' cy='{mid}' r='7' fill='#333'/>",
        ]
        x = _PAD + 16
        for action, state in self.steps:
            out.append(
                f"<line x1='{x}' y1='{mid}' x2='{x + _GAP - 2}' y2='{mid}' stroke='#555' "
                "stroke-width='1.5' marker-end='url(#arrow)'/>"
            )
            out.append(
                f"<text x='{x + _GAP // 2}' y='{mid - 8}' text-anchor='middle' {_FONT} "
                f"fill='#333'>{escape(action)}</text>"
            )
            x += _GAP
            top = mid - _BOX_H // 2
            out.append(
                f"<rect x='{x}' y='{top}' width='{_BOX_W}' height='{_BOX_H}' rx='8' "
                "fill='#e0f2f1' stroke='#00796b'/>"
            )
            out.append(
                f"<text x='{x + _BOX_W // 2}' y='{mid + 4}' text-anchor='middle' {_FONT} "
                f"fill='#004d40'>{escape(state)}</text>"
            )
            x += _BOX_W
        out.append("</svg>")
        return "".join(out)


def transitions(machine: StateMachine, *, include_idempotent: bool = False) -> pd.DataFrame:
    """A machine's transition table as a DataFrame: from, action, to, condition, by whom."""
    import pandas as pd

    rows = [
        {
            "from": t.source or "(new)",
            "action": t.action,
            "to": t.target,
            "condition": t.condition,
            "by": "reconciler" if t.automatic else "caller",
        }
        for t in machine.transitions
        if include_idempotent or not t.idempotent
    ]
    return pd.DataFrame(rows, columns=["from", "action", "to", "condition", "by"])
