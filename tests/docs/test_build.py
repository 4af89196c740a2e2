"""`mkdocs build --strict` passes and the pages carry what the code says."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.paths import ROOT
from tests.vectors import load_vectors
from tools import docgen
from workbench.config import DEFAULT_SECRET_KEY
from workbench.spec import ERRORS, PAYMENT, REFUND, SESSION, SUBSCRIPTION

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_strict_build_passes(build_result: subprocess.CompletedProcess[str]) -> None:
    log = build_result.stdout + build_result.stderr
    assert build_result.returncode == 0, log
    assert "WARNING" not in log, log


def test_error_page_lists_every_code(site: Path) -> None:
    html = (site / "errors" / "index.html").read_text(encoding="utf-8")
    missing = [code for code in ERRORS if f"<code>{code}</code>" not in html]
    assert missing == []
    unanchored = [code for code in ERRORS if f'id="{code.lower()}"' not in html]
    assert unanchored == []


def test_state_page_draws_every_transition_that_changes_the_state(site: Path) -> None:
    html = (site / "concepts" / "state-machines" / "index.html").read_text(encoding="utf-8")
    drawn = re.findall(r'<pre class="mermaid"><code>(.*?)</code></pre>', html, re.S)
    expected = [d for m in (PAYMENT, REFUND, SESSION, SUBSCRIPTION) for d in docgen.diagrams(m)]
    assert len(drawn) == len(expected)
    for diagram, machine in zip(drawn, expected, strict=True):
        assert "stateDiagram-v2" in diagram
        assert diagram.count("--&gt;") == machine.count("-->")
    arrows = "".join(drawn)
    for machine in (PAYMENT, REFUND, SESSION, SUBSCRIPTION):
        for t in machine.transitions:
            if t.source != t.target:
                source = "[*]" if t.source is None else t.source
                assert f"{source} --&gt; {t.target}: " in arrows, (machine.name, t)
                assert t.action in arrows


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    offenders = []
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        for match in re.finditer(
            r'<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)="([^"]+)"', html
        ):
            url = match.group(1)
            if re.match(r"^(?:https?:)?//", url):
                offenders.append(f"{page.relative_to(site)}: {url}")
    assert offenders == []


def test_no_secret_key_appears_on_any_page(site: Path) -> None:
    secrets = {DEFAULT_SECRET_KEY} | {v["secret_key"] for v in load_vectors()}
    pages = [
        f"{p.relative_to(site)}: {s}"
        for p in site.rglob("*.html")
        for s in secrets
        if s in p.read_text("utf-8")
    ]
    assert pages == []


@pytest.mark.skipif(not NOTEBOOKS, reason="notebooks/ holds no notebook yet")
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_published_with_its_outputs(notebook: Path, site: Path) -> None:
    data = json.loads(notebook.read_text(encoding="utf-8"))
    code = [c for c in data["cells"] if c["cell_type"] == "code"]
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert outputs, f"{notebook.name} has no stored outputs: run `make notebooks`"
    errors = [o.get("ename") for o in outputs if o.get("output_type") == "error"]
    assert errors == [], f"{notebook.name} stores error outputs"
    # Stored widget state makes the page fetch the widget manager from a CDN.
    assert "widgets" not in data.get("metadata", {}), f"{notebook.name} stores widget state"
    page = site / "notebooks" / notebook.stem
    assert (page / "index.html").is_file()
    assert (page / notebook.name).read_bytes() == notebook.read_bytes()


def _ids(page: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', page.read_text(encoding="utf-8")))


def test_client_reference_documents_every_resource_method_model_and_exception(
    site: Path,
) -> None:
    import inspect

    import workbench._exceptions
    import workbench.models
    import workbench.resources

    reference = site / "reference" / "client"
    missing = []
    resources = _ids(reference / "resources" / "index.html")
    for name in workbench.resources.__all__:
        cls = getattr(workbench.resources, name)
        path = f"{cls.__module__}.{name}"
        missing += [path] if path not in resources else []
        if name.startswith("Async"):
            continue
        for method, _ in inspect.getmembers(cls, inspect.isfunction):
            if not method.startswith("_") and f"{path}.{method}" not in resources:
                missing.append(f"{path}.{method}")
    models = _ids(reference / "models" / "index.html")
    for name in workbench.models.__all__:
        obj = getattr(workbench.models, name)
        if not inspect.isclass(obj):
            continue
        path = f"{obj.__module__}.{name}"
        # Fields the class declares itself (inherited ones are on the parent's entry).
        fields = [
            f for f in getattr(obj, "model_fields", {}) if f in vars(obj).get("__annotations__", {})
        ]
        missing += [p for p in (path, *(f"{path}.{f}" for f in fields)) if p not in models]
    exceptions = _ids(reference / "exceptions" / "index.html")
    for name in workbench._exceptions.__all__:
        is_class = inspect.isclass(getattr(workbench._exceptions, name))
        if is_class and f"workbench._exceptions.{name}" not in exceptions:
            missing.append(name)
    client = _ids(reference / "index.html")
    missing += [
        c for c in ("workbench._client.Client", "workbench._client.AsyncClient") if c not in client
    ]
    assert missing == []


def _llms_index(site: Path) -> list[tuple[str, str, str]]:
    """``llms.txt``'s page lines: (title, link, summary)."""
    text = (site / "llms.txt").read_text(encoding="utf-8")
    return re.findall(r"^- \[(.+?)\]\((\S+?)\)(?:: (.*))?$", text, re.MULTILINE)


def test_llms_txt_lists_every_page_of_the_guide_once_with_a_line_each(site: Path) -> None:
    text = (site / "llms.txt").read_text(encoding="utf-8")
    assert text.startswith("# Payments Workbench\n\n> ")
    lines = _llms_index(site)
    links = [link for _title, link, _summary in lines]
    assert len(links) == len(set(links))
    pages = {
        str(p.relative_to(site).with_name("index.md"))
        for p in site.rglob("index.html")
        if p.relative_to(site).parts[0] not in ("assets", "search")
    }
    assert set(links) == pages
    for title, link, summary in lines:
        assert (site / link).is_file(), link
        assert summary, f"{title} has no summary line"
        assert "\n" not in summary
    index = {title: summary for title, _link, summary in lines}
    assert index["Webhooks: receive, verify, de-duplicate, retry"].startswith("Run a receiver")
    sections = re.findall(r"^## (.+)$", text, re.MULTILINE)
    assert sections == ["Guide", "Concepts", "Flows", "Sandbox", "Reference", "Contributing"]


def test_llms_full_txt_holds_every_page_text_and_code(site: Path) -> None:
    full = (site / "llms-full.txt").read_text(encoding="utf-8")
    for _title, link, _summary in _llms_index(site):
        page = (site / link).read_text(encoding="utf-8")
        assert f"<!-- {link} -->\n\n{page}" in full, link
    # Code as code: a guide page's, a notebook cell's and an API signature's.
    assert "```python\nfrom fastapi import FastAPI, Request, Response\n" in full
    assert 'card_token="tok_test_success",' in full
    assert "construct_event(\n    payload: bytes | str," in full
    # What the build includes (the generated error table) and expands (the reference).
    assert all(code in full for code in ERRORS)
    assert "class PaymentCaptured" in full or "PaymentCaptured\n" in full
    # Not text to read: copy buttons, the cells' flat copies, permalink marks; no secret.
    assert "Copied!" not in full
    assert "¶" not in full
    assert DEFAULT_SECRET_KEY not in full
