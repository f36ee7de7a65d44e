"""Tests are marked from the fixtures they use (tests/markers.py): a test whose fixture closure
reaches the session's FalkorDB carries `falkordb`, however many fixtures lie between, and nobody
has to remember it."""

from __future__ import annotations

import pytest

from tests.markers import derived_markers

# The fixtures whose users must carry a marker, and that marker: what `-m "not falkordb"`,
# `-m "not processes"` and `-m "not model"` rely on.
STARTERS = {"falkordb_server": "falkordb", "own_server": "falkordb", "embedder": "model",
            "running_gateway": "processes", "cluster3": "cluster"}

SUITE = '''
import pytest
from tests.markers import needs

@pytest.fixture(scope="session")
@needs("falkordb")
def server():
    return "db"

@pytest.fixture
@needs("processes", "falkordb")
async def gateway(client):
    return client

@pytest.fixture
def client(server):
    return server

def test_through_two_fixtures(client):
    assert client == "db"

async def test_through_an_async_one(gateway):
    assert gateway == "db"

def test_with_none():
    pass

@pytest.mark.falkordb
def test_marked_by_hand_is_left_as_it_is(server):
    pass
'''

CONFTEST = "from tests.markers import pytest_collection_modifyitems  # noqa: F401\n"
INI = ('[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\naddopts = --strict-markers\n'
       'markers =\n    falkordb: db\n    processes: processes\n')


@pytest.fixture
def marked_suite(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def selected(pytester, expression: str) -> set[str]:
    result = pytester.runpytest("--collect-only", "-q", "-m", expression)
    return {line.split("::")[1] for line in result.outlines if "::" in line}


def test_a_test_carries_the_markers_of_every_fixture_it_reaches(marked_suite):
    assert selected(marked_suite, "falkordb") == {
        "test_through_two_fixtures", "test_through_an_async_one", "test_marked_by_hand_is_left_as_it_is"}
    assert selected(marked_suite, "processes") == {"test_through_an_async_one"}
    assert selected(marked_suite, "not falkordb") == {"test_with_none"}


def test_the_derived_markers_run_and_pass(marked_suite):
    marked_suite.runpytest("-m", "falkordb").assert_outcomes(passed=3, deselected=1)


def test_every_collected_test_using_a_starter_carries_its_marker(request):
    """Over this session's collected tests (the whole suite when the whole suite runs)."""
    missing = [
        (item.nodeid, marker)
        for item in request.session.items
        for fixture, marker in STARTERS.items()
        if fixture in item.fixturenames and item.get_closest_marker(marker) is None
    ]
    assert missing == []
    assert derived_markers(request.node) == set()  # this test uses no starter: nothing is added to it
