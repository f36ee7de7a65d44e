"""Cypher of retention: a tenant's setting (one `(:Setting {name, value})` node per setting, so it
goes with the graph on reset and delete), and compacting old episodes."""

from __future__ import annotations

from relay_graph.runtime.queries import Query

SET_SETTING = Query(
    "setting_set",
    "MERGE (s:Setting {name: $name}) SET s.value = $value RETURN s.value AS value",
)

CLEAR_SETTING = Query(
    "setting_clear",
    "MATCH (s:Setting {name: $name}) DELETE s RETURN count(s) AS removed",
)

GET_SETTING = Query(
    "setting_get",
    "MATCH (s:Setting {name: $name}) RETURN s.value AS value",
    read_only=True,
)

# One batch of episodes said before $cutoff (Episode.at_ms index): every fact one of them DERIVED
# keeps who said what and when as `source_summary` / `source_at_ms` (its `source` id stays), then
# the episode goes with its edges. Run until a batch comes back smaller than $batch.
COMPACT_EPISODES = Query(
    "retention_compact_episodes",
    "MATCH (ep:Episode) WHERE ep.at_ms < $cutoff "
    "WITH ep LIMIT $batch "
    "OPTIONAL MATCH (ep)-[:DERIVED]->(f:Fact) "
    "WITH ep, collect(f) AS fs "
    "FOREACH (f IN fs | SET f.source_summary = ep.speaker + ': ' + left(ep.text, $chars), "
    "f.source_at_ms = ep.at_ms) "
    "WITH ep, size(fs) AS n "
    "DETACH DELETE ep "
    "RETURN count(ep) AS episodes, sum(n) AS facts",
)
