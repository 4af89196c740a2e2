"""The settings of a command that makes test data: refused on a production address."""

from __future__ import annotations

import click

from workbench.config import ConfigError, Environment, Settings

__all__ = ["sandbox_settings"]


def sandbox_settings(refusal: str, base_url: str | None = None) -> Settings:
    """The client's settings (``base_url`` wins over the environment), as a click error
    when they cannot be read, or with ``refusal`` when they point at production."""
    try:
        settings = Settings.load(base_url=base_url)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    if settings.environment is Environment.PRODUCTION:
        raise click.ClickException(refusal)
    return settings
