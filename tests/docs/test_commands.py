"""Every shell command the README and the guide show works when pasted into a clone.

Commands are read from fenced ``sh``/``bash``/``shell``/``console`` blocks (a block with a
``title`` is a file's content, not commands). Each is checked statically (no bare
``workbench`` or ``uv run`` unless the page first activates the virtual environment, no
``<placeholder>`` that the shell would read as a redirection, valid bash), and the cheap
ones (``--help``, ``workbench sign``) are run, with the block's ``export`` lines first.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.paths import ROOT

SHELLS = {"sh", "bash", "shell", "console"}
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^\n`]*)\n"
    r"(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL,
)
NEEDS_PATH = {"workbench", "uv", "mkdocs", "pytest", "jupyter", "ruff", "mypy"}
ACTIVATE = "source .venv/bin/activate"


def pages() -> list[Path]:
    docs = [p for p in sorted((ROOT / "docs").rglob("*.md")) if "notebooks" not in p.parts]
    return [ROOT / "README.md", *docs, *sorted((ROOT / "notebooks").glob("*.ipynb"))]


def _text(page: Path) -> str:
    """A page's Markdown; for a notebook, its Markdown cells."""
    if page.suffix != ".ipynb":
        return page.read_text(encoding="utf-8")
    cells = json.loads(page.read_text(encoding="utf-8"))["cells"]
    sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
    return "\n\n".join(sources)


@dataclass(frozen=True)
class Command:
    page: str
    text: str
    exports: tuple[str, ...]
    activated: bool

    @property
    def words(self) -> list[str]:
        return shlex.split(self.text, comments=True)


def _commands(page: Path) -> list[Command]:
    source = _text(page)
    found: list[Command] = []
    for match in FENCE.finditer(source):
        info = match["info"].strip()
        language = info.split()[0].strip("{.").lower() if info else ""
        if language not in SHELLS or "title=" in info:
            continue
        indent = len(match["indent"])
        lines = [line[indent:] for line in match["body"].splitlines()]
        if language == "console":
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
        activated = ACTIVATE in source[: match.start()]
        exports: list[str] = []
        for line in joined.splitlines():
            if not shlex.split(line, comments=True):
                continue
            command = Command(str(page.relative_to(ROOT)), line.strip(), tuple(exports), activated)
            found.append(command)
            if command.words[0] == "export":
                exports.append(command.text)
    return found


ALL = [c for p in pages() for c in _commands(p)]


def _cheap(command: Command) -> bool:
    words = command.words
    if not words or words[0] != ".venv/bin/workbench":
        return False
    return "--help" in words or words[1:2] == ["sign"]


def test_the_pages_show_commands() -> None:
    assert len(ALL) > 10
    assert any(_cheap(c) for c in ALL)


@pytest.mark.parametrize("command", ALL, ids=[f"{c.page}:{c.text[:50]}" for c in ALL])
def test_command_can_be_pasted(command: Command) -> None:
    words = command.words
    program = words[0]
    while "=" in program and not program.startswith(("-", "/", ".")) and len(words) > 1:
        words = words[1:]
        program = words[0]
    if not command.activated:
        assert program not in NEEDS_PATH, (
            f"{command.page}: `{program}` is not on PATH in a fresh clone; "
            f"write .venv/bin/{program} (or `{ACTIVATE}` first)"
        )
        assert words[:2] != ["python", "-m"], f"{command.page}: use .venv/bin/python"
    lexer = shlex.shlex(command.text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    assert "<" not in list(lexer), f"{command.page}: an unquoted <placeholder> is a redirection"
    syntax = subprocess.run(["bash", "-n", "-c", command.text], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr


CHEAP = [c for c in ALL if _cheap(c)]


@pytest.mark.parametrize("command", CHEAP, ids=[f"{c.page}:{c.text[:50]}" for c in CHEAP])
def test_cheap_command_runs(command: Command, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env["HOME"] = str(tmp_path)
    script = "\n".join(["set -e", *command.exports, command.text])
    result = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    if "--help" in command.words:
        assert result.returncode == 0, output
        assert "Usage:" in output
    else:
        assert result.returncode in (0, 1), output
        assert "Canonical string" in output


INLINE = re.compile(r"`(?:\.venv/bin/)?workbench ([a-z][a-z-]*)((?: [^`]*)?)`")


def _inline_options() -> list[tuple[str, str, list[str]]]:
    found = []
    for page in pages():
        for match in INLINE.finditer(_text(page)):
            options = re.findall(r"(?<!\S)(--?[a-z][a-z-]*)", match[2])
            found.append((str(page.relative_to(ROOT)), match[1], options))
    return found


def test_commands_and_options_named_in_the_text_exist() -> None:
    """``workbench sign --expect`` in a sentence must be an option ``workbench sign`` has."""
    import click

    from workbench.cli import main

    assert isinstance(main, click.Group)
    context = click.Context(main, info_name="workbench")
    wrong = []
    for page, name, options in _inline_options():
        command = main.get_command(context, name)
        if command is None:
            wrong.append(f"{page}: no command `workbench {name}`")
            continue
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
        wrong.extend(
            f"{page}: `workbench {name}` has no option {o}" for o in options if o not in known
        )
    assert wrong == []


# --- installing the package into another project ------------------------------------------

PIP = '"$PROJECT_VENV/bin/pip" install '
#: The lines of an install recipe, in the order a page shows them.
VENV = "python3 -m venv"
INSTALL_STEPS = (PIP, f'{VENV} "$PROJECT_VENV"', "make wheel", "export WHEEL=")
#: What each extra makes importable in the project's environment.
EXTRA_MODULES = {
    "sandbox": "fastapi",
    "postgres": "psycopg",
    "notebooks": "nbclient",
    "testing": "pytest",
}
INSTALL_PAGES = sorted({c.page for c in ALL if c.text.startswith(PIP)})
#: The page whose recipe is run: it shows every install line the other pages show.
INSTALL_GUIDE = "docs/getting-started.md"


def _install_lines(page: str) -> list[str]:
    return [
        c.text
        for c in ALL
        if c.page == page
        and (c.text.startswith("export PROJECT_VENV=") or c.text.startswith(INSTALL_STEPS))
    ]


def test_every_page_installs_with_lines_of_the_recipe_that_is_run() -> None:
    assert {"README.md", "docs/testing.md", INSTALL_GUIDE} <= set(INSTALL_PAGES)
    run = set(_install_lines(INSTALL_GUIDE))
    for page in INSTALL_PAGES:
        assert set(_install_lines(page)) <= run, page
    for command in ALL:
        assert "pip install payments-workbench" not in command.text, command.page


def _install_script(page: str) -> tuple[str, set[str]]:
    """The page's install lines as one script, and the extras they install.

    pip reads the package index; this test may not, so each ``"$PROJECT_VENV/bin/pip"
    install X`` runs as ``uv pip install X`` into the same environment, at the versions
    uv.lock pins (`_locked_versions`), from uv's cache (``UV_OFFLINE``) unless it lacks
    something (then from the index, the reason printed); a wheel is reinstalled over the
    checkout's install. The environment is made without pip (``--without-pip``), which
    no line then runs: installing it (ensurepip) took 3.6 of the test's 13 CPU-seconds,
    twice where the first try had to go to the index. Everything else runs as written.
    """
    lines = ["set -euo pipefail"]
    extras: set[str] = set()
    for text in _install_lines(page):
        if text.startswith(VENV):
            text = text.replace(VENV, f"{VENV} --without-pip", 1)
        elif text.startswith(PIP):
            target = text[len(PIP) :]
            for named in re.findall(r"\[([a-z,]+)\]", target):
                extras |= set(named.split(","))
            again = " --reinstall-package payments-workbench" if "WHEEL" in target else ""
            into = '--python "$PROJECT_VENV/bin/python"'
            text = f'"$UV" pip install{again} {into} {target}'
        lines.append(text)
    if "all" in extras:
        extras |= set(EXTRA_MODULES)
    return "\n".join(lines), extras - {"all"}


def _working_tree(folder: Path) -> Path:
    """The checkout's files (tracked, and new ones not ignored) copied to ``folder``."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    for name in filter(None, listed.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return folder


def _locked_versions(uv: str, folder: Path) -> Path:
    """uv.lock's versions of every requirement of the package and its extras, as a
    constraints file (``UV_CONSTRAINT``).

    The versions ``make setup`` put in uv's cache: unconstrained, a resolution that has
    to ask the index (a new machine's cache holds no index page, only the locked wheels)
    took the newest of each requirement and downloaded them (87 MB more in the cache);
    constrained, it fetches only the index pages and installs the cached wheels. What the
    lines install is still what the package and its extras require: the lock pins each
    to a version they allow, and the test still finds each extra's modules importable.
    """
    constraints = folder / "uv-lock-constraints.txt"
    subprocess.run(
        [uv, "export", "--frozen", "--no-dev", "--all-extras", "--no-emit-project",
         "--no-hashes", "--format", "requirements-txt", "--quiet", "--output-file",
         str(constraints)],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return constraints


@pytest.mark.wheel
def test_the_install_commands_install_the_package_and_its_extras(tmp_path: Path) -> None:
    page = INSTALL_GUIDE
    uv = shutil.which("uv") or str(ROOT / ".tools" / "bin" / "uv")
    assert Path(uv).is_file(), "uv is missing: `make setup` installs it into .tools/"
    cache = subprocess.run([uv, "cache", "dir"], capture_output=True, text=True, check=True)
    script, extras = _install_script(page)
    assert PIP.strip() not in script, "every pip line is run (through uv)"
    checkout = _working_tree(tmp_path / "checkout")
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("WORKBENCH_", "VIRTUAL_ENV"))}
    env.update(
        HOME=str(home),
        UV=uv,
        UV_OFFLINE="1",  # `make wheel` builds from uv's cache too
        UV_CACHE_DIR=cache.stdout.strip(),
        UV_PYTHON_DOWNLOADS="never",
        UV_CONSTRAINT=str(_locked_versions(uv, tmp_path)),
        PATH=f"{Path(uv).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    done = subprocess.run(
        ["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True, timeout=600
    )
    if done.returncode != 0 and "network was disabled" in done.stderr:
        print(f"not all in uv's cache, from the index: {done.stderr.strip()}")
        shutil.rmtree(home / "myshop")
        del env["UV_OFFLINE"]
        done = subprocess.run(
            ["bash", "-c", script], cwd=checkout, env=env, capture_output=True, text=True,
            timeout=600,
        )  # fmt: skip
    assert done.returncode == 0, f"{script}\n{done.stdout}{done.stderr}"
    python = home / "myshop" / ".venv" / "bin" / "python"
    modules = ["workbench", *(EXTRA_MODULES[e] for e in sorted(extras))]
    probe = (
        "import importlib.util as u, sys; print([m for m in sys.argv[1:] if not u.find_spec(m)])"
    )
    missing = subprocess.run(
        [str(python), "-c", probe, *modules], capture_output=True, text=True, check=True
    )
    assert missing.stdout.strip() == "[]", f"{page}: not installed: {missing.stdout}"
    listed = subprocess.run(
        [str(python.parent / "workbench"), "--help"], capture_output=True, text=True, env=env
    )
    assert listed.returncode == 0, listed.stderr
    for extra in extras:
        assert f"needs the [{extra}" not in listed.stdout, listed.stdout
