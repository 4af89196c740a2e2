"""Property-based run over the sandbox's own OpenAPI document, signed by an auth hook.

Bounded: a few examples per operation, no server error and no response that breaks
the document, and no request the document calls valid refused for a rule the document
could state (`rules_the_document_states`). Controls that sleep or throttle on purpose
are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, reject, settings
from schemathesis.checks import CheckContext, not_a_server_error
from schemathesis.core.transport import Response
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.postgres import PgDatabase
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY
from workbench.sandbox import SandboxServer
from workbench.signing import sign_request
from workbench.testing import running_sandbox


class RequestsSigner(requests.auth.AuthBase):
    """Signs a prepared request over the exact bytes it will send."""

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        body = request.body or b""
        raw = body.encode() if isinstance(body, str) else body
        headers = sign_request(
            api_key=DEFAULT_API_KEY,
            secret_key=DEFAULT_SECRET_KEY,
            method=str(request.method),
            url=urlsplit(str(request.url)).path,
            body=raw,
        )
        request.headers.update(headers.as_dict())
        return request


@pytest.fixture(scope="module")
def fuzz_server(db_url: str) -> Iterator[SandboxServer]:
    """A server on a database of its own, so fuzzed objects do not burden the other tests."""
    database = PgDatabase() if db_url.startswith("postgresql") else None
    url = database.url if database else "sqlite://"
    try:
        with running_sandbox(
            db_url=url, rate_limit_per_second=0, run_reconciler_in_background=False
        ) as server:
            yield server
    finally:
        if database is not None:
            database.drop()


@pytest.fixture(scope="module")
def api_schema(fuzz_server: SandboxServer) -> schemathesis.BaseSchema:
    schema = schemathesis.openapi.from_url(f"{fuzz_server.base_url}/openapi.json")
    return schema.exclude(path_regex=r"^/sandbox/(fail-next|latency|rate-limit|reset)$")


#: What the sandbox says when it refuses a body for a rule a schema can state: such a
#: refusal of a body the document calls valid means the document says less than is
#: enforced (``amount`` required by mode, integers written ``85.0``). Rules no schema
#: can state (a card number's check digit, splits summing to at most the amount, a
#: cursor issued by the sandbox) are the service's own, refused as the document allows.
_SCHEMA_RULES = re.compile(
    r"Input should be a valid integer|required for mode|must be omitted for mode"
    r"|allowed only in mode|required field is missing|unknown field"
)


@schemathesis.check
def rules_the_document_states(
    ctx: CheckContext, response: Response, case: schemathesis.Case
) -> bool | None:
    """A body the document calls valid is never refused for a rule it could state."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 400:
        return None
    message = str(response.json().get("message", ""))
    if _SCHEMA_RULES.search(message):
        raise AssertionError(f"a body the document calls valid was refused: {message}")
    return None


CHECKS = [
    rules_the_document_states,
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_api_conforms_to_its_openapi_document(
    api_schema: schemathesis.BaseSchema, fuzz_server: SandboxServer
) -> None:
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 15
    statuses: list[int] = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck)
        )
        def run(case: schemathesis.Case) -> None:
            try:
                response = case.call(
                    base_url=fuzz_server.base_url, auth=RequestsSigner(), timeout=30
                )
            except (ValueError, requests.exceptions.InvalidURL):
                reject()  # the HTTP client itself cannot send this example
            statuses.append(response.status_code)
            case.validate_response(response, checks=CHECKS)

        run()
    print(
        f"schemathesis: {len(operations)} operations, {len(statuses)} requests, "
        f"statuses {sorted(set(statuses))}"
    )
    assert len(statuses) >= 2 * len(operations)
    assert any(200 <= status < 300 for status in statuses)
