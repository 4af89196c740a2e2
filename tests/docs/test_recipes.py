"""The guide's recipes run against a real sandbox: signing without Python, the test cards."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import httpx2
import pytest

from tests.paths import ROOT
from tests.ports import free_port
from tools import docgen
from workbench._client import Client
from workbench._exceptions import DeclineError, InvalidRequestError
from workbench.config import DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer
from workbench.sandbox import cards as sandbox_cards
from workbench.signing import format_timestamp, sign_request
from workbench.testing import running_sandbox

RECIPES = ROOT / "docs" / "recipes"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxServer]:
    with running_sandbox(rate_limit_per_second=0) as server:
        yield server


def _needs(*tools: str) -> None:
    missing = [tool for tool in tools if shutil.which(tool) is None]
    if missing:
        reason = f"{', '.join(missing)} not installed (scripts/ensure-signing-tools installs them)"
        print(reason)
        pytest.skip(reason)


def _run(
    command: list[str], sandbox: SandboxServer, secret_key: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "WORKBENCH_BASE_URL": sandbox.base_url,
        "WORKBENCH_API_KEY": sandbox.config.api_key,
        "WORKBENCH_SECRET_KEY": secret_key,
    }
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )


RECIPE_COMMANDS = {
    "shell": (["bash", str(RECIPES / "sign-request.sh")], ("bash", "openssl", "curl")),
    "node": (["node", str(RECIPES / "sign-request.mjs")], ("node",)),
    "php": (["php", str(RECIPES / "sign-request.php")], ("php",)),
}


@pytest.mark.parametrize("recipe", sorted(RECIPE_COMMANDS))
def test_recipe_sends_a_charge_the_sandbox_accepts(recipe: str, sandbox: SandboxServer) -> None:
    command, tools = RECIPE_COMMANDS[recipe]
    _needs(*tools)
    result = _run(command, sandbox, sandbox.config.secret_key)
    assert result.returncode == 0, result.stdout + result.stderr
    body = json.loads(result.stdout[result.stdout.index("{") :])
    assert body["status"] == "captured"
    assert body["amount"] == 15000
    with Client(sandbox.config.api_key, sandbox.config.secret_key, sandbox.base_url) as client:
        assert client.payments.retrieve(body["paymentId"]).status == "captured"


@pytest.mark.parametrize("recipe", sorted(RECIPE_COMMANDS))
def test_recipe_with_the_wrong_secret_is_refused(recipe: str, sandbox: SandboxServer) -> None:
    command, tools = RECIPE_COMMANDS[recipe]
    _needs(*tools)
    result = _run(command, sandbox, "sk_test_not_the_merchants_key")
    assert result.returncode != 0
    assert "SVC-GW-1002" in result.stdout + result.stderr


def test_the_signing_page_includes_every_recipe_verbatim() -> None:
    page = (ROOT / "docs" / "concepts" / "signing-without-python.md").read_text("utf-8")
    for name in ("sign-request.sh", "sign-request.mjs", "sign-request.php"):
        assert f'--8<-- "{name}"' in page
        assert any(f"{run} docs/recipes/{name}" in page for run in ("bash", "node", "php"))
    assert '--8<-- "verify-webhook.php"' in page
    assert "workbench postman" in page
    assert DEFAULT_SECRET_KEY not in page


@pytest.fixture
def php_webhook_endpoint(sandbox: SandboxServer) -> Iterator[tuple[str, str]]:
    """The PHP webhook recipe served by ``php -S``, keyed with the demo store's secret."""
    _needs("php")
    with Client(sandbox.config.api_key, sandbox.config.secret_key, sandbox.base_url) as client:
        secret = client.sandbox.fixtures().stores[0].webhook_secret
    assert secret
    port = free_port()
    env = {**os.environ, "WORKBENCH_WEBHOOK_SECRET": secret}
    command = ["php", "-S", f"127.0.0.1:{port}", str(RECIPES / "verify-webhook.php")]
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}/shop/webhooks"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx2.get(url, timeout=2, verify=False)
                break
            except httpx2.TransportError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("php -S did not start") from None
                time.sleep(0.1)
        yield url, secret
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_php_webhook_recipe_accepts_the_sandboxs_deliveries(
    php_webhook_endpoint: tuple[str, str], sandbox: SandboxServer
) -> None:
    url, _secret = php_webhook_endpoint
    with Client(sandbox.config.api_key, sandbox.config.secret_key, sandbox.base_url) as client:
        client.sandbox.set_webhook(url)
        try:
            charge = client.payments.charge_card(
                transaction_id=f"doc-{uuid.uuid4().hex}",
                amount=10_000,
                card_token="tok_test_success",
            )
            event = next(
                e
                for e in reversed(client.sandbox.events().items)
                if e.data.get("paymentId") == charge.payment_id
            )
            deadline = time.monotonic() + 30
            while not (deliveries := client.sandbox.deliveries(event.id)).attempts:
                assert time.monotonic() < deadline, "the sandbox never delivered the event"
                client.sandbox.tick()
                time.sleep(0.2)
        finally:
            client.sandbox.set_webhook(None)
    assert [a.status_code for a in deliveries.attempts] == [200], deliveries.attempts


@pytest.mark.parametrize(
    "forgery", ["good", "body changed", "other secret", "other path", "stale", "offset"]
)
def test_php_webhook_recipe_refuses_what_was_not_signed_so(
    php_webhook_endpoint: tuple[str, str], forgery: str
) -> None:
    """Signed here as the sandbox signs; every change to what was signed is answered 400."""
    url, secret = php_webhook_endpoint
    body = b'{"id":"evt_1","type":"payment.captured","data":{"note":"\xc3\xa7i\xc3\xa7ek"}}'
    moment = datetime.now(UTC) - timedelta(minutes=10 if forgery == "stale" else 0)
    timestamp = format_timestamp(moment)
    # Signed over the offset form itself: only the timestamp's format is wrong.
    timestamp = timestamp.replace("Z", "+00:00") if forgery == "offset" else timestamp
    headers = sign_request(
        api_key="webhook",
        secret_key="whsec_someone_else" if forgery == "other secret" else secret,
        method="POST",
        url="/elsewhere" if forgery == "other path" else "/shop/webhooks",
        body=body,
        timestamp=timestamp,
    ).as_dict()
    sent = body.replace(b"evt_1", b"evt_2") if forgery == "body changed" else body
    answer = httpx2.post(url, content=sent, headers=headers, timeout=10)
    assert answer.status_code == (200 if forgery == "good" else 400)


@pytest.fixture(scope="module")
def client(sandbox: SandboxServer) -> Iterator[Client]:
    with Client(sandbox.config.api_key, sandbox.config.secret_key, sandbox.base_url) as c:
        yield c


def _row(page: str, needle: str) -> list[str]:
    line = next(line for line in page.splitlines() if needle in line)
    return [cell.strip() for cell in line.strip("|").split("|")]


@pytest.mark.parametrize(
    "card", sandbox_cards.TEST_CARDS, ids=[c.token for c in sandbox_cards.TEST_CARDS]
)
def test_test_card_row_is_what_the_sandbox_does(
    card: sandbox_cards.TestCard, client: Client
) -> None:
    """Charge each card as the page says: its 3-D Secure outcome and installments hold."""
    page = docgen.test_cards_table()
    brand, card_type, number, _token, installments, three_ds, _ = _row(page, f"`{card.token}`")
    assert number.strip("`").replace(" ", "") == card.number
    assert (brand.lower(), card_type) == (card.brand, card.card_type)
    try:
        charge = client.payments.charge_card(
            transaction_id=f"doc-{uuid.uuid4().hex}",
            amount=10_000,
            card_token=card.token,
            three_d_secure=True,
        )
    except DeclineError:
        assert three_ds == "none: declined first"
    else:
        assert charge.card_brand == card.brand
        assert charge.card_type == card.card_type
        expected = "pending_3ds" if three_ds.startswith("challenge") else "captured"
        assert charge.status == expected, three_ds
    split = {
        "transaction_id": f"doc-{uuid.uuid4().hex}",
        "amount": 10_000,
        "card_token": card.token,
        "three_d_secure": False,
        "installment_count": 2,
    }
    if installments == "1 only":
        with pytest.raises(InvalidRequestError, match="installmentCount"):
            client.payments.charge_card(**split)  # type: ignore[arg-type]
    else:
        assert installments == "1 to 12"
        try:
            charge = client.payments.charge_card(**split)  # type: ignore[arg-type]
        except DeclineError:
            return
        assert charge.installment_count == 2


@pytest.mark.parametrize("number", docgen.OTHER_NUMBERS)
def test_other_numbers_tokenize_as_the_brand_the_page_names(number: str, client: Client) -> None:
    page = docgen.test_cards_table()
    grouped = " ".join(number[i : i + 4] for i in range(0, len(number), 4))
    brand, card_type, *_ = _row(page, f"`{grouped}`")
    token = client.cards.tokenize(
        card_number=number,
        expiry_month=12,
        expiry_year=2099,
        cvc="1234"[: 4 if brand == "Amex" else 3],
    )
    assert (token.card_brand, token.card_type) == (brand.lower(), card_type)
    charge = client.payments.charge_card(
        transaction_id=f"doc-{uuid.uuid4().hex}", amount=10_000, card_token=token.token
    )
    assert charge.status == "captured"


def test_the_pages_local_sandbox_block_runs_as_written(sandbox: SandboxServer) -> None:
    """The page's own block (keys read from the package, every recipe) against a sandbox.

    Only the address changes: the page's fixed port becomes the test sandbox's free one.
    """
    _needs("bash", "openssl", "curl", "node", "php")
    page = (ROOT / "docs" / "concepts" / "signing-without-python.md").read_text("utf-8")
    block = next(b for b in re.findall(r"```sh\n(.*?)```", page, re.S) if "sign-request.sh" in b)
    assert "http://127.0.0.1:8765" in block
    script = "set -e\n" + block.replace("http://127.0.0.1:8765", sandbox.base_url)
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    result = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count('"status":"captured"') == 3, result.stdout
