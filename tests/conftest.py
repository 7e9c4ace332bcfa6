"""Shared fixtures (a CliRunner). Helper functions live in tests/support, never here: a
conftest is not imported by name."""

from __future__ import annotations

import pytest
from click.testing import CliRunner


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
