"""Load from a separate process: wrk (Debian's package) replaying pre-signed requests.

Each request in the file is distinct (its own Idempotency-Key and transactionId),
signed in advance with a fresh timestamp, so the server does the full work of a new
charge every time; wrk cycles through them from a Lua script.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

LUA = r"""
local requests = {}
local i = 0
init = function(args)
  for line in io.lines(args[1]) do
    local method, path, headers, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
    local h = {}
    for pair in headers:gmatch("[^\031]+") do
      local k, v = pair:match("^([^:]+): (.*)$")
      h[k] = v
    end
    table.insert(requests, wrk.format(method, path, h, body))
  end
end
request = function()
  i = i % #requests + 1
  return requests[i]
end
"""


@dataclass(frozen=True)
class Load:
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    requests: int
    non_2xx: int


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk_available() -> bool:
    return shutil.which("wrk") is not None


def write_requests(path: Path, rows: list[tuple[str, str, dict[str, str], str]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for method, target, headers, body in rows:
            joined = "\x1f".join(f"{k}: {v}" for k, v in headers.items())
            f.write(f"{method}\t{target}\t{joined}\t{body}\n")


def run(url: str, requests_file: Path, *, seconds: int, connections: int, workdir: Path) -> Load:
    script = workdir / "replay.lua"
    script.write_text(LUA, encoding="utf-8")
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{seconds}s",
            "--latency",
            "-s",
            str(script),
            url,
            "--",
            str(requests_file),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    p50 = _ms(re.search(r"\s50%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"\s99%\s+(\S+)", out).group(1))  # type: ignore[union-attr]
    total = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return Load(rps, p50, p99, total, int(bad.group(1)) if bad else 0)
