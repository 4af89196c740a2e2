"""The property tests run without Hypothesis' per-example deadline (the root conftest.py).

A deadline is a wall-clock limit: on a loaded machine an example exceeds it whatever the
code does, and the test fails for the machine, not the code.
"""

from __future__ import annotations

from hypothesis import settings


def test_the_suite_loads_a_profile_without_a_deadline() -> None:
    assert settings.get_current_profile_name() == "workbench"
    assert settings.default is not None
    assert settings.default.deadline is None
