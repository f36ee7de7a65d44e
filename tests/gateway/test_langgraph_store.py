"""relay_client.langgraph.RelayStore, LangGraph's BaseStore on Relay, against the real gateway
process and FalkorDB, driven through LangGraph's own API (and one compiled graph)."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp

from relay_client import Admin, AsyncRelay, Relay
from relay_client.langgraph import RelayStore


@pytest.fixture
def admin(running_gateway):
    with Admin(url=running_gateway.url, key=running_gateway.admin_key) as admin:
        yield admin


@pytest.fixture
def team(admin):
    """A fresh memory-only tenant and its key's client."""
    name = f"lg-{uuid.uuid4().hex[:10]}"
    with admin.tenant(name, admin.create_tenant(name).api_key) as relay:
        yield relay
    admin.delete_tenant(name)


@pytest.fixture
def store(team):
    return RelayStore(team)


VALUE = {"text": "Asha prefers tea — masala chai, no sugar 🍵", "tags": ["drink", "morning"], "n": 3, "ratio": 0.1,
         "nested": {"ok": True, "none": None, "line": "a\nb\tc"}, "quote": "\"{}\""}


def test_a_value_comes_back_exactly_as_put(store):
    store.put(("users", "asha"), "drink", VALUE)
    item = store.get(("users", "asha"), "drink")
    assert item is not None and item.value == VALUE and list(item.value) == list(VALUE)
    assert item.key == "drink" and item.namespace == ("users", "asha")
    assert item.created_at == item.updated_at and item.created_at.tzinfo is not None
    assert store.get(("users", "asha"), "nothing") is None
    assert store.get(("users", "nobody"), "drink") is None


def test_an_update_replaces_the_value_and_the_earlier_one_stays_in_history(team, admin, store):
    crm = Relay(team.tenant, key=team.create_agent("crm-bot").api_key, url=admin.url)
    other = RelayStore(crm)  # another agent, another store object: one memory
    store.put(("users", "asha"), "city", {"city": "pune"})
    other.put(("users", "asha"), "city", {"city": "mumbai"})
    item = store.get(("users", "asha"), "city")
    assert item.value == {"city": "mumbai"}
    assert item.updated_at >= item.created_at
    versions = store.history(("users", "asha"), "city")
    assert [(v.value, v.agent) for v in versions] == [({"city": "pune"}, "api"), ({"city": "mumbai"}, "crm-bot")]
    assert versions[0].at == item.created_at and versions[1].at == item.updated_at
    assert all(v.recorded_at is not None for v in versions)
    # and the same turns through the plain client, by the namespace's session
    page = team.episodes(store.session_of(("users", "asha")))
    assert [e.agent for e in page.episodes] == ["api", "crm-bot"]
    crm.close()


def test_a_delete_makes_the_item_gone_until_it_is_put_again(store):
    ns = ("users", "asha")
    store.put(ns, "plan", {"plan": "fiber 300"})
    store.put(ns, "other", {"x": 1})
    first = store.get(ns, "plan")
    store.delete(ns, "plan")
    assert store.get(ns, "plan") is None
    assert [i.key for i in store.search(ns)] == ["other"]
    assert [i.key for i in store.search(ns, query="which fiber plan")] == ["other"]
    assert [v.value for v in store.history(ns, "plan")] == [{"plan": "fiber 300"}, None]
    store.put(ns, "plan", {"plan": "fiber 500"})
    again = store.get(ns, "plan")
    assert again.value == {"plan": "fiber 500"} and again.created_at > first.created_at
    store.delete(ns, "other")
    store.delete(ns, "plan")
    assert store.list_namespaces(prefix=("users",)) == []  # a namespace with no item is not listed


MEMORIES = {
    "m1": {"text": "The user is allergic to peanuts and carries an epinephrine pen"},
    "m2": {"text": "Their daughter plays the violin in the school orchestra"},
    "m3": {"text": "They drive a blue electric car and charge it at night"},
    "m4": {"text": "Favourite holiday destination is the Kerala backwaters"},
}


def test_a_query_ranks_the_item_that_answers_it_first(store):
    ns = ("memories", "u1")
    for key, value in MEMORIES.items():
        store.put(ns, key, value)
    for question, key in [("does the user have any food allergies?", "m1"),
                          ("what instrument does the child play?", "m2"),
                          ("what kind of vehicle do they own?", "m3")]:
        found = store.search(ns, query=question, limit=4)
        assert found[0].key == key, (question, [(i.key, i.score) for i in found])
        assert found[0].score is not None and found[0].value == MEMORIES[key]
    assert len(store.search(ns, query="music", limit=2)) == 2
    assert [i.key for i in store.search(ns, query="music", limit=10, offset=3)] != []


def test_a_query_finds_only_the_newest_value_of_a_key(store):
    ns = ("memories", "u2")
    store.put(ns, "car", {"text": "They drive a blue electric car"})
    store.put(ns, "pet", {"text": "They have a cat named Miso"})
    store.put(ns, "car", {"text": "They sold the car and now cycle to work"})
    found = store.search(ns, query="blue electric car", limit=5)
    scored = [(i.key, i.value) for i in found if i.score is not None]
    assert ("car", {"text": "They drive a blue electric car"}) not in scored
    assert {i.key: i.value for i in found}["car"] == {"text": "They sold the car and now cycle to work"}
    assert len(found) == 2


def test_search_without_a_query_lists_items_and_applies_the_filter(store):
    ns = ("docs",)
    store.put(ns, "a", {"type": "article", "status": "published", "views": 10})
    store.put(ns, "b", {"type": "article", "status": "draft", "views": 50})
    store.put(ns, "c", {"type": "note", "status": "published", "views": 99})
    store.put(("docs", "deep"), "d", {"type": "article", "status": "published", "views": 7})
    assert [i.key for i in store.search(ns)] == ["d", "c", "b", "a"]  # newest change first
    assert {i.key for i in store.search(ns, filter={"type": "article", "status": "published"})} == {"a", "d"}
    assert {i.key for i in store.search(ns, filter={"views": {"$gt": 20}})} == {"b", "c"}
    assert {i.key for i in store.search(ns, filter={"type": {"$ne": "article"}})} == {"c"}
    assert [i.key for i in store.search(ns, limit=2, offset=1)] == ["c", "b"]
    assert all(i.score is None for i in store.search(ns))
    found = store.search(ns, query="an article", filter={"status": "draft"})
    assert [i.key for i in found] == ["b"]


def test_list_namespaces_by_prefix_suffix_and_depth(store):
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"),
               ("b", "a", "f"), ("users", "x")]:
        store.put(ns, "k", {"v": 1})
    assert store.list_namespaces(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"),
                                                        ("a", "b", "f")]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a",), max_depth=3) == [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f"),
                                                                 ("a", "c", "f")]
    assert store.list_namespaces(max_depth=1) == [("a",), ("b",), ("users",)]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]


def test_namespaces_are_kept_apart(store):
    store.put(("users", "a"), "k", {"text": "a's secret recipe for lemon cake"})
    store.put(("users", "ab"), "k2", {"text": "ab's note"})
    store.put(("users", "A"), "k3", {"text": "capital A is another user"})
    store.put(("users", "a/b c%"), "k4", {"text": "odd characters stay apart"})
    assert store.get(("users", "b"), "k") is None
    assert store.search(("users", "b")) == [] and store.search(("users", "b"), query="lemon cake") == []
    assert [i.key for i in store.search(("users", "a"))] == ["k"]
    assert [i.key for i in store.search(("users", "a"), query="lemon cake")] == ["k"]
    assert store.get(("users", "A"), "k") is None and store.get(("users", "A"), "k3") is not None
    assert store.get(("users", "a/b c%"), "k4").namespace == ("users", "a/b c%")
    assert {i.key for i in store.search(("users",))} == {"k", "k2", "k3", "k4"}
    assert store.search(("use",)) == []


def test_a_batch_reads_before_it_writes_and_the_last_put_of_a_key_wins(store):
    ns = ("b",)
    store.put(ns, "k", {"v": 0})
    got = store.batch([PutOp(ns, "k", {"v": 1}), GetOp(ns, "k"), PutOp(ns, "k", {"v": 2}), SearchOp(ns)])
    assert got[0] is None and got[1].value == {"v": 0} and [i.value for i in got[3]] == [{"v": 0}]
    assert store.get(ns, "k").value == {"v": 2}
    assert [v.value for v in store.history(ns, "k")] == [{"v": 0}, {"v": 2}]


def test_what_relay_cannot_keep_is_refused_before_anything_is_written(store):
    with pytest.raises(ValueError, match="at most 8000"):
        store.put(("big",), "k", {"text": "x" * 9000})
    with pytest.raises(InvalidNamespaceError, match="too long"):
        store.put(("x" * 130,), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"v": 1})
    with pytest.raises(NotImplementedError):
        store.put(("a",), "k", {"v": 1}, ttl=5)
    assert store.list_namespaces() == []


async def test_the_async_store_works_on_an_async_client(team, admin):
    async with AsyncRelay(team.tenant, key=team.create_agent("async-bot").api_key, url=admin.url) as relay:
        store = RelayStore(relay)
        await store.aput(("users", "z"), "k", {"text": "likes jazz on vinyl"})
        await store.aput(("users", "z"), "k2", {"text": "works night shifts at the hospital"})
        assert (await store.aget(("users", "z"), "k")).value == {"text": "likes jazz on vinyl"}
        found = await store.asearch(("users",), query="what music do they like?")
        assert found[0].key == "k"
        assert await store.alist_namespaces() == [("users", "z")]
        await store.adelete(("users", "z"), "k")
        assert await store.aget(("users", "z"), "k") is None
        assert [v.agent for v in await store.ahistory(("users", "z"), "k")] == ["async-bot", "async-bot"]
        with pytest.raises(TypeError):
            store.get(("users", "z"), "k2")  # no sync client was given


class State(TypedDict):
    user: str
    said: str
    recalled: Annotated[list[str], operator.add]


def remember(state: State, *, store) -> dict:
    store.put(("memories", state["user"]), f"m{len(state['said'])}", {"text": state["said"]})
    return {}


def recall(state: State, *, store) -> dict:
    found = store.search(("memories", state["user"]), query="what pet do they have?", limit=1)
    return {"recalled": [i.value["text"] for i in found]}


def test_a_langgraph_graph_uses_relay_as_its_store(store):
    graph = StateGraph(State)
    graph.add_node("remember", remember)
    graph.add_node("recall", recall)
    graph.add_edge(START, "remember")
    graph.add_edge("remember", "recall")
    graph.add_edge("recall", END)
    app = graph.compile(store=store)
    app.invoke({"user": "asha", "said": "I bake sourdough every Sunday", "recalled": []})
    out = app.invoke({"user": "asha", "said": "We adopted a beagle puppy called Bruno", "recalled": []})
    assert out["recalled"] == ["We adopted a beagle puppy called Bruno"]
    assert {i.value["text"] for i in store.search(("memories", "asha"))} == {
        "I bake sourdough every Sunday", "We adopted a beagle puppy called Bruno"}
    assert store.list_namespaces(prefix=("memories",)) == [("memories", "asha")]


def test_the_client_loads_nothing_of_langgraph_until_the_store_is_imported():
    import subprocess
    import sys

    code = "import sys, relay_client; print(any(m.split('.')[0] == 'langgraph' for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"
