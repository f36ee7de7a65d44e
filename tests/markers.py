"""Markers from fixtures: a fixture says once what it needs (`@needs("falkordb")`, under its
`@pytest.fixture`), and every test whose fixture closure reaches it carries those markers, however
many fixtures lie between (the hook below, installed by tests/conftest.py). So `-m "not falkordb"`
skips every test that would start FalkorDB without anyone remembering to mark the test.

A test that starts something in its own body (not through a fixture) still marks itself."""

from __future__ import annotations

import pytest

ATTRIBUTE = "relay_needs"


def needs(*markers: str):
    """Tag a fixture's function with the markers its users must carry."""

    def tag(fn):
        setattr(fn, ATTRIBUTE, markers)
        return fn

    return tag


def fixture_markers(fixturedef) -> tuple[str, ...]:
    """What a fixture definition needs (pytest-asyncio wraps async fixtures: look underneath)."""
    func = fixturedef.func
    while func is not None:
        if found := getattr(func, ATTRIBUTE, None):
            return found
        func = getattr(func, "__wrapped__", None)
    return ()


def derived_markers(item) -> set[str]:
    """The markers the fixtures a test uses (its fixture closure) give it."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:  # not a python test function (a doctest, say)
        return set()
    out: set[str] = set()
    for name in item.fixturenames:
        defs = info.name2fixturedefs.get(name) or ()
        if defs:  # the last definition is the one in effect where the test lives
            out.update(fixture_markers(defs[-1]))
    return out


def pytest_collection_modifyitems(items) -> None:
    for item in items:
        have = {m.name for m in item.iter_markers()}
        for name in sorted(derived_markers(item) - have):
            item.add_marker(getattr(pytest.mark, name))


__all__ = ["needs", "derived_markers", "fixture_markers", "pytest_collection_modifyitems"]
