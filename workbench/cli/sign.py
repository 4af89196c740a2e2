"""``workbench sign``: the signature debugger."""

from __future__ import annotations

import json
from pathlib import Path

import click

from workbench.config import ENV_SECRET_KEY, Settings, mask_secret
from workbench.signature_debug import diagnose
from workbench.signing import (
    TimestampInvalid,
    body_sha256,
    canonical_path,
    format_timestamp,
    parse_timestamp,
    sign,
)

__all__ = ["sign_command"]


def _visible(text: str) -> str:
    """Quote a canonical line so spaces, tabs and stray characters show."""
    return json.dumps(text, ensure_ascii=False).replace(" ", "\u2423")


def _read_body(body: str | None) -> bytes:
    if body is None:
        return b""
    if body.startswith("@"):
        return Path(body[1:]).read_bytes()
    return body.encode("utf-8")


@click.command("sign")
@click.argument("method")
@click.argument("url")
@click.option("--body", "-d", help="Request body, inline or @file (read as raw bytes).")
@click.option("--timestamp", "-t", help="X-Timestamp text to sign (default: now, UTC).")
@click.option(
    "--expect",
    "-e",
    metavar="SIGNATURE",
    help="A signature to check; on mismatch, name the usual mistake that reproduces it.",
)
@click.option("--api-key", help="Public key for the headers (default: from configuration).")
def sign_command(
    method: str,
    url: str,
    body: str | None,
    timestamp: str | None,
    expect: str | None,
    api_key: str | None,
) -> None:
    """Sign METHOD URL with the secret key from the environment and explain every step.

    The secret key comes from WORKBENCH_SECRET_KEY (or .env, or the local sandbox's
    demo key) and is never printed. Exit status: 0 when the signature is computed (and
    matches --expect, if given); 1 when --expect does not match.
    """
    settings = Settings.load(api_key=api_key)
    data = _read_body(body)
    ts = timestamp if timestamp is not None else format_timestamp()
    upper = method.upper()
    path = canonical_path(url)
    digest = body_sha256(data)
    signature = sign(settings.secret_key, ts, upper, path, data)
    echo = click.echo

    echo(f"Secret key: {mask_secret(settings.secret_key)} (from {ENV_SECRET_KEY} or defaults)")
    if upper != method:
        echo(f"note: method {method!r} uppercased to {upper!r} as the canonical string requires")
    if path != url:
        echo(
            f"note: URL reduced to its route path {path!r} (no domain, query or trailing "
            "slash); the server reduces the path it receives the same way"
        )
    try:
        parse_timestamp(ts)
    except TimestampInvalid as exc:
        echo(f"warning: the server will reject this timestamp (SVC-GW-1001): {exc}")
    echo("")
    echo("Canonical string (4 lines joined by LF, no trailing newline; \u2423 marks a space):")
    for number, (label, line) in enumerate(
        (("timestamp", ts), ("method", upper), ("path", path), ("body sha256", digest)), start=1
    ):
        echo(f"  {number} {label:<12} {_visible(line)}")
    echo(f"  as one string: {_visible(chr(10).join((ts, upper, path, digest)))}")
    echo("")
    what = "empty body: SHA-256 of the empty string" if not data else f"{len(data)} bytes"
    echo(f"Body: {what}")
    echo(f"Body SHA-256: {digest}")
    echo(f"Signature:    {signature}")
    echo("")
    echo("Headers:")
    echo(f"  X-Api-Key: {settings.api_key}")
    echo(f"  X-Timestamp: {ts}")
    echo(f"  X-Signature: {signature}")
    if expect is None:
        return
    echo("")
    result = diagnose(
        secret_key=settings.secret_key,
        timestamp=ts,
        method=method,
        url=url,
        body=data,
        given=expect,
        api_key=settings.api_key,
    )
    if result.matches:
        echo("MATCH: the expected signature is correct for this request.")
        return
    echo("MISMATCH: the signature given is not the one this request needs.")
    if result.mistakes:
        for mistake in result.mistakes:
            echo(f"  reproduced by: {mistake.name}: {mistake.description}")
            echo(f"    fix: {mistake.fix}")
    else:
        echo("  No usual mistake reproduces it: check the secret key and that the body bytes")
        echo("  signed are exactly the bytes sent.")
    raise SystemExit(1)
