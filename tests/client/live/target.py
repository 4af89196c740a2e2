"""Where the live tests' sandbox is: its address and the demo merchant's keys (`Live`)."""

from __future__ import annotations

from dataclasses import dataclass

from workbench._client import Client
from workbench.config import DEFAULT_API_KEY, DEFAULT_SECRET_KEY

__all__ = ["Live"]


@dataclass(frozen=True)
class Live:
    """Where the live sandbox is and the demo merchant's keys."""

    base_url: str
    api_key: str = DEFAULT_API_KEY
    secret_key: str = DEFAULT_SECRET_KEY

    def client(self, **kwargs: object) -> Client:
        return Client(self.api_key, self.secret_key, self.base_url, **kwargs)  # type: ignore[arg-type]
