from __future__ import annotations

import pytest

from tests.fuzz import test_api_fuzz


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    count = test_api_fuzz.sent["requests"]
    if count:
        terminalreporter.write_line(f"fuzz: {count} generated requests sent in-process")
