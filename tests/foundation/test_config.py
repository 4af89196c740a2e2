"""Settings: precedence, .env, masking and the demo-key production guard."""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest

from workbench.config import (
    DEFAULT_API_KEY,
    DEFAULT_BASE_URL,
    DEFAULT_SECRET_KEY,
    ConfigError,
    Environment,
    Settings,
    mask_key,
    mask_secret,
)

SECRET = "sk_test_supersecretvalue_9f3a"


def test_defaults_point_at_the_local_sandbox(tmp_path: Path) -> None:
    s = Settings.load(env={}, dotenv_path=tmp_path / "none")
    assert s.base_url == DEFAULT_BASE_URL
    assert (s.api_key, s.secret_key) == (DEFAULT_API_KEY, DEFAULT_SECRET_KEY)
    assert s.environment is Environment.LOCAL


def test_precedence_arguments_env_dotenv(tmp_path: Path) -> None:
    dotenv = tmp_path / ".env"
    dotenv.write_text(
        "WORKBENCH_BASE_URL=https://sandbox-api.example\nWORKBENCH_API_KEY=pk_test_fromdotenv\n"
        f"WORKBENCH_SECRET_KEY={SECRET}\n"
    )
    s = Settings.load(env={"WORKBENCH_API_KEY": "pk_test_fromenv"}, dotenv_path=dotenv)
    assert s.base_url == "https://sandbox-api.example"
    assert s.api_key == "pk_test_fromenv"
    assert s.secret_key == SECRET
    assert s.environment is Environment.SANDBOX
    s2 = Settings.load(
        api_key="pk_test_arg", env={"WORKBENCH_API_KEY": "pk_env"}, dotenv_path=dotenv
    )
    assert s2.api_key == "pk_test_arg"


def test_secret_never_in_repr_or_str() -> None:
    s = Settings(base_url="http://127.0.0.1:1", api_key="pk_test_abcdef123456", secret_key=SECRET)
    for text in (repr(s), str(s), f"{s}"):
        assert SECRET not in text
        assert "supersecret" not in text
        assert "sk_…9f3a" in text


def test_mask_helpers() -> None:
    assert mask_secret(SECRET) == "sk_…9f3a"
    assert mask_secret("sk_short") == "sk_…"
    assert mask_secret("") == "<unset>"
    assert mask_key("pk_test_abcdef123456") == "pk_test_…3456"


def test_demo_key_against_production_is_refused_before_any_request() -> None:
    with pytest.raises(ConfigError, match="demo key") as info:
        Settings.load(
            base_url="https://api.payments.example",
            api_key="pk_demo_123",
            secret_key=SECRET,
            env={},
            dotenv_path=None,
        )
    assert SECRET not in str(info.value)
    ok = Settings.load(
        base_url="https://sandbox.payments.example",
        api_key="pk_demo_123",
        secret_key=SECRET,
        env={},
        dotenv_path=None,
    )
    assert ok.environment is Environment.SANDBOX


def test_explicit_environment_overrides_guess() -> None:
    with pytest.raises(ConfigError):
        Settings.load(
            base_url="https://sandbox.example",
            api_key="pk_demo_1",
            secret_key=SECRET,
            environment="production",
            env={},
            dotenv_path=None,
        )


@pytest.mark.parametrize("url", ["ftp://x", "127.0.0.1:8765"])
def test_bad_base_url(url: str) -> None:
    with pytest.raises(ConfigError, match="base URL"):
        Settings(base_url=url)


def test_secret_not_logged_by_repr(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    logging.getLogger("workbench.test").debug("settings: %r", Settings(secret_key=SECRET))
    assert SECRET not in caplog.text


def test_env_example_lists_the_readmes_variables_and_loads_as_the_defaults() -> None:
    root = Path(__file__).resolve().parents[2]
    example = (root / ".env.example").read_text()
    listed = set(re.findall(r"^(WORKBENCH_[A-Z_]+)=", example, flags=re.M))
    table = set(re.findall(r"^\| `(WORKBENCH_[A-Z_]+)` \|", (root / "README.md").read_text(), re.M))
    assert listed == table
    loaded = Settings.load(env={}, dotenv_path=root / ".env.example")
    assert loaded == Settings.load(env={}, dotenv_path=None)


def test_pre_commit_runs_the_locked_ruff() -> None:
    root = Path(__file__).resolve().parents[2]
    hooks = (root / ".pre-commit-config.yaml").read_text()
    lock = (root / "uv.lock").read_text()
    locked = re.search(r'\[\[package\]\]\nname = "ruff"\nversion = "([^"]+)"', lock)
    assert locked is not None
    assert f"rev: v{locked.group(1)}" in hooks
    assert "id: ruff-check" in hooks
