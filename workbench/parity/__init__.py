"""Parity: where two targets (the local sandbox, the provider, a recording) differ.

The flows of `workbench.flows.FLOWS`, the code behind the notebooks, run against each
target (`record`); every exchange is kept, redacted (`Recording`, saved and loaded as
versioned JSON); the two runs are compared step by step after normalising what must
differ (`compare`), and the result is shown as a terminal table, Markdown and HTML.
``workbench parity`` is the command; the guide's parity page explains the report.
"""

from workbench.parity._compare import (
    Difference,
    FlowResult,
    ParityReport,
    Step,
    compare,
    compare_flow,
)
from workbench.parity._model import (
    FORMAT,
    FORMAT_VERSION,
    Exchange,
    FlowRecord,
    Recording,
    RecordingError,
    Stop,
    load_recording,
    save_recording,
)
from workbench.parity._record import (
    ControlRouteMissing,
    FlowRecorder,
    RecordingTransport,
    Target,
    TargetError,
    record,
)
from workbench.parity._report import (
    progress_line,
    render_html,
    render_markdown,
    summary_table,
)
from workbench.spec.redaction import REDACTED, Redactor

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "REDACTED",
    "ControlRouteMissing",
    "Difference",
    "Exchange",
    "FlowRecord",
    "FlowRecorder",
    "FlowResult",
    "ParityReport",
    "Recording",
    "RecordingError",
    "RecordingTransport",
    "Redactor",
    "Step",
    "Stop",
    "Target",
    "TargetError",
    "compare",
    "compare_flow",
    "load_recording",
    "progress_line",
    "record",
    "render_html",
    "render_markdown",
    "save_recording",
    "summary_table",
]
