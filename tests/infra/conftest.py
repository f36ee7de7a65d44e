"""The live compose test's figures, printed at the end of the run (pytest captures test output)."""

from __future__ import annotations

FIGURES: list[str] = []


def pytest_terminal_summary(terminalreporter):
    if FIGURES:
        terminalreporter.section("docker compose (tests/infra/test_compose_live.py)")
        for line in FIGURES:
            terminalreporter.write_line(line)
