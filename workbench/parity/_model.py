"""The recording format: what one target answered to each flow, redacted, as JSON.

A live run and a recording are the same object (`Recording`): a run is compared in
memory, saved with `save_recording`, and read back with `load_recording`. The file is
JSON with a ``format`` name and a ``version``; a reader refuses a version it does not
know instead of guessing. The guide's parity page describes every field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "Exchange",
    "FlowRecord",
    "Recording",
    "RecordingError",
    "Stop",
    "load_recording",
    "save_recording",
]

#: The ``format`` field of every recording.
FORMAT: Final = "workbench-parity-recording"
#: The version this package writes and reads.
FORMAT_VERSION: Final = 1


class RecordingError(ValueError):
    """A recording file cannot be read (missing, not JSON, another format or version)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Exchange(_Model):
    """One HTTP request a flow sent and the answer it got (each attempt of a retry is one).

    Attributes:
        method: the HTTP method.
        path: the path and query, bearer segments redacted.
        status: the HTTP status.
        request_id: the ``X-Request-Id`` answered.
        replayed: the ``Idempotent-Replayed`` header, as sent.
        retry_after: the ``Retry-After`` header, as sent.
        request: the JSON body sent (redacted), ``None`` for none.
        response: the JSON body received (redacted); text when it was not JSON.
        control: the path is one of the local sandbox's control routes (``/sandbox/…``).
        observed: parity's own read after the flow (the events of the flow's objects),
            not a call the flow made.
    """

    method: str
    path: str
    status: int
    request_id: str | None = None
    replayed: str | None = None
    retry_after: str | None = None
    request: JsonValue = None
    response: JsonValue = None
    control: bool = False
    observed: bool = False


class Stop(_Model):
    """Why a flow did not run to its end on a target.

    Attributes:
        kind: ``control`` (the target has no sandbox control routes and the flow needed
            one) or ``error`` (the flow raised).
        step: the step it stopped at (1-based; one past the last exchange kept).
        reason: what happened, in one line.
    """

    kind: Literal["control", "error"]
    step: int
    reason: str


class FlowRecord(_Model):
    """One flow's run on one target.

    Attributes:
        name: the flow's name in `workbench.flows.FLOWS`.
        params: the parameters it ran with.
        exchanges: its exchanges in order, then parity's observed events read.
        states: the states the flow's main object went through (``[]`` if it stopped).
        stopped: why it did not run to its end, ``None`` when it did.
    """

    name: str
    params: dict[str, JsonValue]
    exchanges: tuple[Exchange, ...]
    states: tuple[str, ...] = ()
    stopped: Stop | None = None


class Recording(_Model):
    """Every flow's run on one target.

    Attributes:
        format: always `FORMAT`.
        version: the format's version (`FORMAT_VERSION`).
        created_at: when the run started (UTC, ``Z``).
        workbench_version: the package version that ran the flows.
        target: what the target was (its base URL or "fresh local sandbox").
        control_routes: whether the target had the sandbox's control routes.
        flows: one record per flow, in the order they ran.
    """

    format: Literal["workbench-parity-recording"] = FORMAT
    version: Literal[1] = FORMAT_VERSION
    created_at: str
    workbench_version: str
    target: str
    control_routes: bool
    flows: tuple[FlowRecord, ...]

    def flow(self, name: str) -> FlowRecord | None:
        """The record of the flow called ``name``, if it ran."""
        return next((f for f in self.flows if f.name == name), None)


def save_recording(recording: Recording, path: Path) -> None:
    """Write ``recording`` to ``path`` as indented JSON (UTF-8)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(recording.model_dump_json(indent=2) + "\n", encoding="utf-8")


def load_recording(path: Path) -> Recording:
    """Read a recording written by `save_recording`.

    Raises:
        RecordingError: the file is missing, is not JSON, or has another format or version.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordingError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return Recording.model_validate_json(text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the file"
        raise RecordingError(
            f"{path} is not a parity recording of format {FORMAT!r} version {FORMAT_VERSION} "
            f"({where}: {first['msg']})"
        ) from None
