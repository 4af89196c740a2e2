"""Loads the signing vectors computed independently with openssl.

The spec's copy (``../shared/spec/signing-vectors.json`` beside the checkout) is
the source; ``tests/data/signing-vectors.json`` is a committed copy for a clone
without it, and a test keeps the two identical whenever both are present.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "spec" / "signing-vectors.json"
COPY = ROOT / "tests" / "data" / "signing-vectors.json"


def vectors_path() -> Path:
    return SHARED if SHARED.is_file() else COPY


def load_vectors() -> list[dict[str, Any]]:
    data = json.loads(vectors_path().read_text(encoding="utf-8"))
    vectors: list[dict[str, Any]] = data["vectors"]
    assert vectors, "the vectors file holds no vectors"
    return vectors
