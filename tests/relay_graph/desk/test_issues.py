"""Issue names, and entity linking of two customers' problems against a real FalkorDB: alike words,
different place, time or device, never one issue."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from relay_graph.memory import facts
from relay_graph.memory.entities import FUZZY_THRESHOLD, similarity
from relay_graph.runtime.errors import InvalidValue
from relay_graph.desk.extraction.rules import extract
from relay_graph.desk.tickets.issues import issue_kind, issue_name
from relay_graph.memory.models import FactInput
from relay_graph.runtime.queries import Query


def test_an_issue_is_named_by_its_kind_and_the_details_given():
    assert issue_name("wifi_drops") == "wifi_drops"
    assert issue_name("wifi_drops", device="TV", place="upstairs", time="since Monday") == \
        "wifi_drops on the tv upstairs since monday"
    assert issue_name("slow_speed", device="my laptop", place="kitchen", time=date(2026, 9, 4)) == \
        "slow_speed on the laptop in the kitchen since 2026-09-04"
    assert issue_name("slow_speed", time=datetime(2026, 9, 4, 18, tzinfo=timezone.utc)) == "slow_speed since 2026-09-04"
    assert issue_name("intermittent", place="in the bedroom", time="every evening") == \
        "intermittent in the bedroom every evening"
    assert issue_kind("wifi_drops on the tv upstairs") == "wifi_drops" and issue_kind("no_connection") == "no_connection"
    with pytest.raises(InvalidValue):
        issue_name("   ")


def test_extracted_reports_of_alike_problems_get_different_names():
    a = extract("my wifi keeps dropping upstairs since monday on the tv").problem
    b = extract("wifi keeps dropping in the kitchen since friday on my laptop").problem
    c = extract("wifi keeps dropping upstairs since monday on the ps5").problem
    names = {issue_name(p.kind.value, device=p.device, place=p.place, time=p.time) for p in (a, b, c)}
    assert len(names) == 3 and all(n.startswith("wifi_drops ") for n in names)


async def issues_of(graph_client, tenant) -> dict[str, list[str]]:
    rows = await graph_client.run(tenant, Query(
        "t", "MATCH (c:Customer)-[:HAS_ISSUE]->(i:Issue) RETURN c.name AS c, i.name AS i ORDER BY c, i", True))
    out: dict[str, list[str]] = {}
    for r in rows:
        out.setdefault(r["c"], []).append(r["i"])
    return out


async def test_two_customers_problems_are_not_merged_into_one_issue(graph_client, tenant):
    reports = {"Alice Rao": "my wifi keeps dropping upstairs since monday on the tv",
               "Bob Iyer": "wifi keeps dropping in the kitchen since friday on my laptop",
               # one word from Alice's: close enough for fuzzy name matching, which issues never use
               "Chen Wu": "my wifi keeps dropping upstairs since sunday on the tv"}
    for customer, text in reports.items():
        p = extract(text).problem
        await facts.write_fact(graph_client, tenant, FactInput(
            subject=customer, predicate="has_issue", agent="intake",
            object=issue_name(p.kind.value, device=p.device, place=p.place, time=p.time)))
    linked = await issues_of(graph_client, tenant)
    assert linked == {"Alice Rao": ["wifi_drops on the tv upstairs since monday"],
                      "Bob Iyer": ["wifi_drops on the laptop in the kitchen since friday"],
                      "Chen Wu": ["wifi_drops on the tv upstairs since sunday"]}
    assert similarity(linked["Alice Rao"][0], linked["Chen Wu"][0]) > FUZZY_THRESHOLD
    count = await graph_client.run(tenant, Query("t", "MATCH (i:Issue) RETURN count(i) AS n", True))
    assert count == [{"n": 3}]

    # the same customer telling the same problem again corroborates it: still one issue
    again = await facts.write_fact(graph_client, tenant, FactInput(
        subject="alice rao", predicate="has_issue", agent="intake", object="wifi_drops on the TV upstairs since Monday"))
    assert again.outcome.value == "corroborated"
    assert (await issues_of(graph_client, tenant))["Alice Rao"] == ["wifi_drops on the tv upstairs since monday"]
