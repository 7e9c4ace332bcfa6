"""Shared fixtures (a CliRunner) and the tiers' one rule beyond pyproject. Helper functions
live in tests/support, never here: a conftest is not imported by name."""

from __future__ import annotations

import pytest
from click.testing import CliRunner


def pytest_configure(config: pytest.Config) -> None:
    """Files or tests named on the command line run whatever their tier: pyproject's addopts
    select the fast tier (``-m "not (cluster or …)"``) for a run over the whole suite, but
    ``python -m pytest tests/test_compiled_writer.py`` runs that file's tests, not none (exit 5).
    An explicit ``-m`` always wins."""
    explicit_m = any(arg.startswith("-m") for arg in config.invocation_params.args)
    if config.args_source == pytest.Config.ArgsSource.ARGS and not explicit_m:
        config.option.markexpr = ""


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
