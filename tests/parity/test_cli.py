"""``workbench parity``: a fresh sandbox against a target, recordings, reports, exit status."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.parity.proxy import DEVIATIONS
from tests.parity.runs import Seen
from tests.parity.secrets import assert_no_secrets
from workbench.cli import main
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.flows import FLOWS
from workbench.parity import Recording, compare, load_recording, save_recording

#: The environment of a run whose target B is ``url``, as a team's CI would set it.
_KEYS = {"WORKBENCH_API_KEY": DEFAULT_API_KEY, "WORKBENCH_SECRET_KEY": DEFAULT_SECRET_KEY}


def _invoke(args: list[str], env: dict[str, str | None]) -> Result:
    return CliRunner().invoke(main, ["parity", *args], env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def against_proxy(
    deviating_url: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Result, Path]:
    """``workbench parity`` with A the fresh sandbox it starts and B the deviating proxy."""
    folder = tmp_path_factory.mktemp("parity-cli")
    args = ["--record", str(folder / "proxy.json"), "--report-dir", str(folder / "report")]
    return _invoke(args, {"WORKBENCH_BASE_URL": deviating_url, **_KEYS}), folder


def test_the_command_reports_the_four_deviations_and_exits_1(
    against_proxy: tuple[Result, Path],
) -> None:
    result, folder = against_proxy
    print(result.output)
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("A: fresh local sandbox at http://127.0.0.1:")
    assert lines[1].startswith("B: http://127.0.0.1:")
    progress = [line for line in lines if line.startswith("[")]
    assert [p.split()[1] for p in progress] == list(FLOWS)
    assert "Parity: 4 differences in 4 flows; 0 steps skipped." in result.output
    for flow, request, kind, field in DEVIATIONS:
        matching = [line for line in lines if line.strip().startswith(f"{flow} step")]
        assert len(matching) == 1, result.output
        assert request in matching[0]
        assert field in matching[0]
        assert kind in matching[0]
    markdown = (folder / "report" / "parity.md").read_text(encoding="utf-8")
    assert "4 differences in 4 flows" in markdown
    assert "| quickstart | 4/4 | 3 | 1 | 0 | 0 | 0 | 1 difference |" in markdown
    assert (folder / "report" / "parity.html").read_text(encoding="utf-8").startswith("<!doctype")


def test_the_recorded_target_is_b_and_holds_no_secrets(
    against_proxy: tuple[Result, Path], sqlite_run: Recording, secrets_seen: Seen
) -> None:
    _, folder = against_proxy
    recorded = load_recording(folder / "proxy.json")
    assert recorded.target.startswith("http://127.0.0.1:")
    assert recorded.control_routes
    assert [f.name for f in recorded.flows] == list(FLOWS)
    assert len(compare(sqlite_run, recorded).differences) == 4
    for path in (folder / "proxy.json", folder / "report/parity.md", folder / "report/parity.html"):
        assert_no_secrets(path, secrets_seen)


def test_against_a_recording_without_credentials(sqlite_run: Recording, tmp_path: Path) -> None:
    path = tmp_path / "sqlite.json"
    save_recording(sqlite_run, path)
    env: dict[str, str | None] = {"WORKBENCH_BASE_URL": None, "WORKBENCH_SECRET_KEY": None}
    args = ["--against-recording", str(path), "--report-dir", str(tmp_path)]
    args += ["quickstart", "refunds"]
    result = _invoke(args, env)
    assert result.exit_code == 0, result.output
    assert f"B: recording {path} of SQLite sandbox" in result.output
    assert "[2/2] refunds" in result.output
    assert "Parity: no differences; 0 steps skipped." in result.output
    assert (tmp_path / "parity.md").is_file()


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ([], {"WORKBENCH_BASE_URL": None}, "no target B: set WORKBENCH_BASE_URL"),
        (["nosuchflow"], {}, "no flow named nosuchflow"),
        (
            ["--b-url", "https://api.example.com"],
            {"WORKBENCH_ENVIRONMENT": None},
            "is a production address",
        ),
        (["--against-recording", "missing.json"], {}, "cannot read missing.json"),
        (
            ["--against-recording", "x.json", "--b-url", "http://127.0.0.1:9"],
            {},
            "pass one",
        ),
    ],
)
def test_what_cannot_run_exits_2_with_the_reason(
    args: list[str], env: dict[str, str | None], message: str, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)  # no .env of the checkout's
    result = CliRunner().invoke(main, ["parity", *args], env=env)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
