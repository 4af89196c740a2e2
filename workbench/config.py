"""Settings: base URL, keys and environment, from arguments, env vars or a ``.env`` file.

Precedence: explicit arguments, then ``WORKBENCH_*`` environment variables, then
a ``.env`` file, then the local sandbox's demo defaults (which the sandbox also
uses, so the two agree out of the box). Nothing here reads settings at import
time: call `Settings.load` where you need them.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from urllib.parse import urlsplit

__all__ = [
    "DEFAULT_API_KEY",
    "DEFAULT_BASE_URL",
    "DEFAULT_SECRET_KEY",
    "ConfigError",
    "Environment",
    "Settings",
    "mask_key",
    "mask_secret",
]

#: The local sandbox's default address (``workbench sandbox`` listens here).
DEFAULT_BASE_URL = "http://127.0.0.1:8765"
#: The local sandbox demo merchant's key pair; public by design, valid only there.
DEFAULT_API_KEY = "pk_test_wb_demo_0001"
DEFAULT_SECRET_KEY = "sk_test_wb_demo_secret_0001"

ENV_BASE_URL = "WORKBENCH_BASE_URL"
ENV_API_KEY = "WORKBENCH_API_KEY"
ENV_SECRET_KEY = "WORKBENCH_SECRET_KEY"
ENV_ENVIRONMENT = "WORKBENCH_ENVIRONMENT"
#: Set by ``workbench lab``: the notebook runs in front of a person, so pages may be shown.
ENV_INTERACTIVE = "WORKBENCH_INTERACTIVE"


class ConfigError(ValueError):
    """The settings are unusable (missing key, demo key against production...)."""


class Environment(StrEnum):
    """Where requests go."""

    LOCAL = "local"
    """The workbench's own sandbox on this machine."""
    SANDBOX = "sandbox"
    """The provider's test environment."""
    PRODUCTION = "production"
    """Real money."""


def mask_secret(secret: str | None) -> str:
    """Show a secret as its prefix and at most its last four characters (``sk_…a1b2``)."""
    if not secret:
        return "<unset>"
    prefix = secret[:3] if secret[:3] in ("sk_", "pk_") else ""
    tail = secret[-4:] if len(secret) >= 12 else ""
    return f"{prefix}…{tail}"


def mask_key(api_key: str | None) -> str:
    """Show a public key by its environment prefix and last four characters."""
    if not api_key:
        return "<unset>"
    for prefix in ("pk_test_", "pk_demo_", "pk_live_", "pk_"):
        if api_key.startswith(prefix):
            return f"{prefix}…{api_key[-4:]}"
    return f"…{api_key[-4:]}"


def _guess_environment(base_url: str) -> Environment:
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return Environment.LOCAL
    try:
        if ipaddress.ip_address(host).is_loopback:
            return Environment.LOCAL
    except ValueError:
        pass
    if "sandbox" in host or "test" in host:
        return Environment.SANDBOX
    return Environment.PRODUCTION


@dataclass(frozen=True, slots=True)
class Settings:
    """Where to send requests and with which keys.

    The secret key is kept out of ``repr`` and ``str``; `mask_secret` shows it safely.

    Attributes:
        base_url: the service base address, without a trailing slash.
        api_key: the public key (``pk_``) sent as X-Api-Key.
        secret_key: the secret key (``sk_``) used only to sign.
        environment: local sandbox, provider sandbox or production.
    """

    base_url: str = DEFAULT_BASE_URL
    api_key: str = DEFAULT_API_KEY
    secret_key: str = field(default=DEFAULT_SECRET_KEY, repr=False)
    environment: Environment = Environment.LOCAL

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", self.base_url.rstrip("/"))
        self.check()

    def request_page(self, request_id: str | None) -> str | None:
        """A request's page in the local sandbox's dashboard
        (``{base_url}/dashboard/requests/{requestId}``); ``None`` elsewhere than the local
        sandbox (the provider has no such page) or without a request id."""
        if self.environment is not Environment.LOCAL or not request_id:
            return None
        return f"{self.base_url}/dashboard/requests/{request_id}"

    def check(self) -> None:
        """Refuse settings that must never send a request.

        Raises:
            ConfigError: a key is missing, or a ``pk_demo_`` key targets production.
        """
        if not self.api_key:
            raise ConfigError(f"no API key: pass api_key= or set {ENV_API_KEY}")
        if not self.secret_key:
            raise ConfigError(f"no secret key: pass secret_key= or set {ENV_SECRET_KEY}")
        scheme = urlsplit(self.base_url).scheme
        if scheme not in ("http", "https"):
            raise ConfigError(f"base URL must be http(s)://..., got {self.base_url!r}")
        if self.environment is Environment.PRODUCTION and self.api_key.startswith("pk_demo_"):
            raise ConfigError(
                "a demo key (pk_demo_...) cannot be used against the production address "
                f"{self.base_url}: demo keys work only in the test environment; use a live "
                "key, or point base_url at the sandbox"
            )

    @classmethod
    def load(
        cls,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        secret_key: str | None = None,
        environment: Environment | str | None = None,
        env: Mapping[str, str] | None = None,
        dotenv_path: str | Path | None = ".env",
    ) -> Settings:
        """Resolve settings: arguments, then environment variables, then ``.env``, then defaults.

        Args:
            base_url: overrides ``WORKBENCH_BASE_URL``.
            api_key: overrides ``WORKBENCH_API_KEY``.
            secret_key: overrides ``WORKBENCH_SECRET_KEY``.
            environment: overrides ``WORKBENCH_ENVIRONMENT``; guessed from the URL otherwise.
            env: the environment to read (default: ``os.environ``).
            dotenv_path: a ``.env`` file to read, or ``None`` for none.
        """
        source: dict[str, str] = {}
        if dotenv_path is not None and Path(dotenv_path).is_file():
            from dotenv import dotenv_values  # only when there is a file to read

            source.update({k: v for k, v in dotenv_values(dotenv_path).items() if v is not None})
        source.update(os.environ if env is None else env)
        url = base_url or source.get(ENV_BASE_URL) or DEFAULT_BASE_URL
        key = api_key or source.get(ENV_API_KEY) or DEFAULT_API_KEY
        secret = secret_key or source.get(ENV_SECRET_KEY) or DEFAULT_SECRET_KEY
        env_name = environment or source.get(ENV_ENVIRONMENT)
        resolved = Environment(env_name) if env_name else _guess_environment(url)
        return cls(base_url=url, api_key=key, secret_key=secret, environment=resolved)

    def __repr__(self) -> str:
        return (
            f"Settings(base_url={self.base_url!r}, api_key={mask_key(self.api_key)!r}, "
            f"secret_key={mask_secret(self.secret_key)!r}, environment={self.environment.value!r})"
        )

    __str__ = __repr__
