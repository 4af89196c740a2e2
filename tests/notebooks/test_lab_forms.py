"""The flow forms in JupyterLab, in Chromium: every label, value and button read in full.

JupyterLab is started as ``workbench lab`` starts it (`workbench.cli.lab.lab_command`)
on a folder holding a notebook that shows every flow's form, and the clone's
``ruff.toml`` beside it, which the file browser must not list. No sandbox is needed: a
form talks to one only when its Run button is clicked.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx2
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from tests.chromium import chromium
from tests.paths import ROOT
from tests.ports import free_port
from workbench.cli.lab import lab_command

pytestmark = pytest.mark.browser

#: Every flow's form, one under the other.
SHOW_FORMS = """\
from workbench.flows import FLOWS
from workbench.notebook.widgets import flow_form

for name in FLOWS:
    display(flow_form(name).widget)
"""
#: What is cut: a button, label or field narrower than its text (`scrollWidth`), a
#: select narrower than its widest option (measured in its font, padding and arrow
#: included).
MEASURE_CUT = """
() => {
  const area = document.querySelector('.jp-OutputArea');
  const cut = [];
  const clipped = e => e.scrollWidth > e.clientWidth + 1;
  for (const e of area.querySelectorAll('.widget-button, .widget-toggle-button, .widget-label')) {
    if (clipped(e)) cut.push(e.innerText);
  }
  const ruler = document.createElement('span');
  ruler.style.cssText = 'position:absolute; white-space:pre; visibility:hidden';
  document.body.appendChild(ruler);
  const width = (text, style) => {
    ruler.style.font = style.font;
    ruler.textContent = text;
    return ruler.getBoundingClientRect().width;
  };
  for (const field of area.querySelectorAll('select, input[type=text]')) {
    const style = getComputedStyle(field);
    const texts = field.tagName === 'SELECT' ? [...field.options].map(o => o.text) : [field.value];
    const room = field.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    for (const text of texts) if (width(text, style) > room) cut.push(text);
  }
  ruler.remove();
  return {cut, buttons: area.querySelectorAll('.widget-button').length};
}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """JupyterLab on a folder with the forms' notebook and the clone's ruff.toml."""
    folder = tmp_path_factory.mktemp("lab")
    book = new_notebook(cells=[new_code_cell(SHOW_FORMS)])
    book.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                   "language": "python"}  # fmt: skip
    nbformat.write(book, folder / "forms.ipynb")
    (folder / "ruff.toml").write_bytes((ROOT / "notebooks" / "ruff.toml").read_bytes())
    port = free_port()
    serve = ("--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
             "--IdentityProvider.token=", "--ServerApp.password=")  # fmt: skip
    process = subprocess.Popen(
        lab_command(folder, serve),
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx2.get(f"{base}/api/status", timeout=2).status_code == 200:
                    break
            except httpx2.HTTPError:
                pass
            assert process.poll() is None, "JupyterLab ended before it served"
            assert time.monotonic() < deadline, "JupyterLab did not serve within 60 s"
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_forms_show_their_labels_values_and_buttons_whole(lab: str) -> None:
    with chromium("the flow forms in JupyterLab") as browser:
        page: Any = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_default_timeout(60_000)
        page.goto(f"{lab}/lab/tree/forms.ipynb")
        page.locator(".jp-Notebook .jp-Cell").first.click()
        page.keyboard.press("Shift+Enter")
        page.locator(".jp-OutputArea .widget-button").nth(7).wait_for()
        listed = page.locator(".jp-DirListing-itemName").all_inner_texts()
        measured = page.evaluate(MEASURE_CUT)
    assert "forms.ipynb" in listed
    assert "ruff.toml" not in listed
    assert measured["buttons"] >= 8
    assert measured["cut"] == []
