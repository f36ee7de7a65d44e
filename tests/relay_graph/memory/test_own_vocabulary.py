"""The engine imported alone, with a vocabulary its user registers: a made-up gardening predicate
written and read end to end on the real FalkorDB (one write, a batch, a supersede, the history,
the typed mirror edge, and a predicate registered after the first writes), in a process that loads
nothing of the desk."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]

SCRIPT = r"""
import asyncio, json, sys
from relay_graph.memory import registry
from relay_graph.memory.entities import entity_uid
from relay_graph.memory.names import name_key
from relay_graph.memory.facade import Memory
from relay_graph.memory.models import FactInput
from relay_graph.memory.registry import Cardinality, ConflictPolicy, Predicate
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidValue, UnknownPredicate
from relay_graph.runtime.queries import Query

host, port, tenant = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = {"registered_at_start": sorted(registry.REGISTRY)}


def plant(value):
    if value.lower() == "weeds":
        raise InvalidValue("weeds are not planted")
    return value.title()


registry.register(Predicate("grows", "Garden", "Plant", Cardinality.MULTI, ConflictPolicy.SUPERSEDE, "GROWS",
                            plant))
registry.register(Predicate("soil", "Garden", "Soil", Cardinality.SINGLE, ConflictPolicy.SUPERSEDE, "HAS_SOIL"))
EDGES = Query("edges", "MATCH (:Entity {uid: $uid})-[e]->(o:Entity) RETURN type(e) AS type, o.name AS name "
                       "ORDER BY type, name", read_only=True)


async def main():
    client = GraphClient(GraphSettings(falkordb_host=host, falkordb_port=port))
    memory = Memory(client)
    try:
        await memory.write_fact(tenant, FactInput(subject="Rose Garden", predicate="soil", object="clay", agent="ann"))
        await memory.write_fact(tenant, FactInput(subject="Rose Garden", predicate="soil", object="loam", agent="bob"))
        await memory.write_facts(tenant, [
            FactInput(subject="Rose Garden", predicate="grows", object="roses", agent="ann"),
            FactInput(subject="Rose Garden", predicate="grows", object="tulips", agent="ann"),
            FactInput(subject="Kitchen Garden", predicate="soil", object="sand", agent="ann"),
        ])
        try:
            await memory.write_fact(tenant, FactInput(subject="Rose Garden", predicate="grows", object="weeds",
                                                      agent="ann"))
            out["weeds"] = "written"
        except InvalidValue as exc:
            out["weeds"] = exc.code
        try:
            await memory.write_fact(tenant, FactInput(subject="Rose Garden", predicate="phone", object="12345678",
                                                      agent="ann"))
            out["phone"] = "written"
        except UnknownPredicate as exc:
            out["phone"] = exc.code
        # registered after the statements were first built: they are built again, with its edge
        registry.register(Predicate("visited_by", "Garden", "Bird", Cardinality.MULTI, ConflictPolicy.SUPERSEDE,
                                    "VISITED_BY"))
        await memory.write_facts(tenant, [
            FactInput(subject="Rose Garden", predicate="visited_by", object="robin", agent="ann"),
        ])
        current = await memory.facts(tenant, "Rose Garden")
        out["current"] = sorted([f.predicate, f.object, f.asserted_by] for f in current)
        out["soil_history"] = [[f.object, f.state.value] for f in await memory.history(tenant, "Rose Garden", "soil")]
        out["kitchen"] = [[f.predicate, f.object] for f in await memory.facts(tenant, "Kitchen Garden")]
        rows = await client.run(tenant, EDGES, {"uid": entity_uid("Garden", name_key("Rose Garden"))})
        out["edges"] = [[r["type"], r["name"]] for r in rows]
    finally:
        await client.close()
    out["desk_modules"] = sorted(m for m in sys.modules if m.startswith("relay_graph.desk"))
    print(json.dumps(out))


asyncio.run(main())
"""


def test_the_engine_alone_writes_and_reads_a_vocabulary_of_its_own(falkordb_server, tenant):
    done = subprocess.run([sys.executable, "-c", SCRIPT, falkordb_server.host, str(falkordb_server.port), tenant],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["registered_at_start"] == []  # the engine brings no vocabulary
    assert out["desk_modules"] == []
    assert out["current"] == [["grows", "Roses", "ann"], ["grows", "Tulips", "ann"], ["soil", "loam", "bob"],
                              ["visited_by", "robin", "ann"]]
    assert out["soil_history"] == [["clay", "superseded"], ["loam", "current"]]
    assert out["kitchen"] == [["soil", "sand"]]
    assert out["weeds"] == "invalid_value"  # the user's own check refused it
    assert out["phone"] == "unknown_predicate"  # no desk predicate without the desk
    assert out["edges"] == [["GROWS", "Roses"], ["GROWS", "Tulips"], ["HAS_SOIL", "loam"], ["VISITED_BY", "robin"],
                            ["WAS", "clay"]]


def test_registering_is_idempotent_and_refuses_a_second_meaning():
    from relay_graph.desk import vocabulary
    from relay_graph.memory import registry

    before = registry.generation()
    phone = vocabulary.PREDICATES[[p.name for p in vocabulary.PREDICATES].index("phone")]
    assert registry.register(phone) is registry.get("phone") and registry.generation() == before
    other = registry.Predicate("phone", "Customer", "Phone", registry.Cardinality.SINGLE,
                               registry.ConflictPolicy.SUPERSEDE, "HAS_PHONE", phone.check, claim=phone.claim)
    with pytest.raises(ValueError, match="registered already"):
        registry.register(other)
    with pytest.raises(ValueError, match="not a predicate name"):
        registry.Predicate("x' OR 1=1", "Garden", "Plant", registry.Cardinality.MULTI,
                           registry.ConflictPolicy.SUPERSEDE, "GROWS")
    assert registry.get("phone").single is False and registry.generation() == before
