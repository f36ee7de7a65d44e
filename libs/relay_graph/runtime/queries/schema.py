"""Indexes of a tenant graph, created on first use. The runtime names no label of its own but
the outbox's: each package declares the indexes its statements rely on, next to them (`declare`,
at the import of its statements: the engine's in `memory.queries`, the desk's and the catalogue's
in `desk.queries`, the outbox's in `runtime.queries.outbox`).

A tenant holds the indexes of what it uses, not every declared one: each label and relationship
type a graph knows costs it memory, and a memory-only tenant never touches a ticket. So
`GraphClient.run` creates, before a statement, the declared indexes that statement needs
(`needed`): those of the labels it names, read or write, so that no statement ever scans a label
an index was declared for; a vector index only once a write names the vector's property (the index
reserves its memory with the first vector) or a read queries it by name. `GraphClient.ensure_schema`
creates every declared index at once (a reset, the benches). A package that declares more later (`generation`) reaches a tenant
already ready. Creating an index that exists is an error in FalkorDB, so the client reads
`db.indexes()` first."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Indexes:
    range: tuple[tuple[str, str], ...] = ()  # (label, property) range indexes on nodes
    fulltext: tuple[tuple[str, str], ...] = ()  # (label, property); a label's fields share one index
    vector: tuple[tuple[str, str, int], ...] = ()  # (label, property, dimension), cosine


_declared: dict[str, Indexes] = {}
_generation = 0


def declare(owner: str, indexes: Indexes) -> None:
    """The indexes `owner` (its package, "relay_graph.memory") relies on. Declaring the same again
    changes nothing; labels and properties must be plain identifiers (they go into Cypher text)."""
    global _generation
    for label, prop, *_ in (*indexes.range, *indexes.fulltext, *indexes.vector):
        if not (_IDENT.fullmatch(label) and _IDENT.fullmatch(prop)):
            raise ValueError(f"{label}.{prop} is not a safe label and property")
    if _declared.get(owner) != indexes:
        _declared[owner] = indexes
        _generation += 1


# A package's one-off work on a tenant's stored data (a key its statements compute differently now):
# `migrate(run, tenant)`, where `run(query, params)` runs a statement on that tenant's graph. The
# client runs each once per tenant per process, after the indexes and before the tenant's first
# statement; it must be idempotent and cheap when there is nothing to do (several processes may
# run it at once).
Migration = Callable[[Callable[[Any, dict], Awaitable[list[dict]]], str], Awaitable[object]]
_migrations: dict[str, Migration] = {}


def declare_migration(name: str, migrate: Migration) -> None:
    global _generation
    if _migrations.get(name) is not migrate:
        _migrations[name] = migrate
        _generation += 1


def migrations() -> tuple[tuple[str, Migration], ...]:
    return tuple(_migrations.items())


def generation() -> int:
    """Moves with every new declaration: a tenant made ready before it lacks what it declared."""
    return _generation


# A label in a pattern or a predicate (`(n:Fact:Current)`, `WHERE n:Current`, `SET n:Retired`),
# and the label (and property) a procedure queries an index of by name.
_LABEL = re.compile(r":\s*([A-Za-z][A-Za-z0-9_]*)")
_QUERIED = re.compile(r"db\.idx\.(fulltext|vector)\.queryNodes\(\s*'([A-Za-z][A-Za-z0-9_]*)'(?:\s*,\s*'([A-Za-z][A-Za-z0-9_]*)')?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def needed(cypher: str, read_only: bool) -> Indexes:
    """The declared indexes a statement needs before it runs (see the module's note). A word after
    a colon that is not a label (a map's key) names no declared label and costs nothing."""
    d = declared()
    queried_labels = {label for _, label, _ in _QUERIED.findall(cypher)}
    labels = set(_LABEL.findall(cypher)) | queried_labels
    words = set() if read_only else set(_WORD.findall(cypher))
    return Indexes(range=tuple(i for i in d.range if i[0] in labels),
                   fulltext=tuple(i for i in d.fulltext if i[0] in labels),
                   vector=tuple(i for i in d.vector if i[0] in labels and (i[1] in words or i[0] in queried_labels)))


def declared() -> Indexes:
    """Every package's indexes, each once, in the order declared."""
    def union(kind: str) -> tuple:
        return tuple(dict.fromkeys(i for d in _declared.values() for i in getattr(d, kind)))

    return Indexes(union("range"), union("fulltext"), union("vector"))


LIST_INDEXES = "CALL db.indexes() YIELD label, properties, types RETURN label, properties, types"
INDEX_STATUS = "CALL db.indexes() YIELD status RETURN status"


def range_index(label: str, prop: str) -> str:
    return f"CREATE INDEX FOR (n:{label}) ON (n.{prop})"


def vector_index(label: str, prop: str, dim: int) -> str:
    return (
        f"CREATE VECTOR INDEX FOR (n:{label}) ON (n.{prop}) "
        f"OPTIONS {{dimension:{dim}, similarityFunction:'cosine'}}"
    )


FULLTEXT_INDEX = "CALL db.idx.fulltext.createNodeIndex($label, $prop)"
