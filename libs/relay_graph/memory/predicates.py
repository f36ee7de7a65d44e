"""A tenant's own vocabulary: predicates it defines at run time, beside the built-in ones.

A tenant defines a predicate with its cardinality (single or multi), its object type (text,
entity, number or time), its conflict policy (supersede, or keep_both: another agent's different
value stands beside the current one and a Conflict opens) and a description. It is kept in the
tenant's graph as a `:Predicate` node, so it goes wherever the graph goes (snapshots, moves,
deletion) and no other tenant sees it; two tenants may define one name differently. Its facts are
written by the same planner and statements as the built-in ones (`facts.py`), with:

- the subject: an entity of the type the built-in predicates are about (`SUBJECT_TYPE`): a
  customer's id, or a name as given, the same entity `lives_in` of that key addresses;
- the object: an entity (`Thing`, mirrored as a typed edge named after the predicate,
  `prefers_language` -> PREFERS_LANGUAGE), or a value (`Text`, `Number`, `Time`; not mirrored)
  checked and stored in one canonical form (a number without exponent or trailing zeros, a time
  in UTC with its offset), so that two spellings of one value are one value;
- its name is never one of a built-in predicate, and its edge never a relationship type the
  graph uses for something else.

Cardinality decides how a slot's facts were planned, so it cannot change while the predicate has
facts (StateConflict with the count); the object type, policy and description apply to later
writes and may change. Retiring one refuses later writes and keeps its facts readable; defining it
again brings it back (with its cardinality, while it has facts).

Every process sees a change on its next write: each keeps the vocabularies it read (`vocabulary`)
with the stamp the tenant's `:Vocabulary` node had, which every change replaces.
- A write that names a built-in predicate reads nothing (built-in names are never the tenant's).
- A name the cached vocabulary does not have is read again at once: a predicate defined by
  another process is found on the first write that names it.
- Otherwise the cached vocabulary is used as it is for `CHECK_EVERY_S` after it was read or
  checked, and then checked against the stamp (one read of one indexed node) before it is used
  again. A retirement or a change made by another process is thus seen within that time; the
  process that made it drops its copy at once. Facts written meanwhile were valid when written.
No stream notification is needed: streams are consumed per service group (one replica of a
service would hear of a change, not every process), while the stamp reaches every process.
"""

from __future__ import annotations

import re
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field

from relay_graph.memory.inputs import check_time, text_type
from relay_graph.memory.queries import predicates as q
from relay_graph.memory.registry import (
    BUILT_IN,
    NAME,
    NAME_PATTERN,
    REGISTRY,
    TURN_PREDICATES,
    Cardinality,
    ConflictPolicy,
    Predicate,
    Vocabulary,
    as_is,
    builtin,
)
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import AlreadyExists, InvalidInput, InvalidValue, NotFound, StateConflict
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import now_ms

CHECK_EVERY_S = 1.0
MAX_ATTEMPTS = 20
MAX_DESCRIPTION = 500
_KEY = "vocabulary"  # the one :Vocabulary node's key


class ObjectKind(str, Enum):
    TEXT = "text"
    ENTITY = "entity"
    NUMBER = "number"
    TIME = "time"


class ConflictChoice(str, Enum):
    SUPERSEDE = "supersede"  # another agent's different value replaces the current one
    KEEP_BOTH = "keep_both"  # it stands beside it as a claim, and a Conflict opens for a person


SUBJECT_TYPE = "Customer"
OBJECT_TYPES = {ObjectKind.TEXT: "Text", ObjectKind.ENTITY: "Thing", ObjectKind.NUMBER: "Number",
                ObjectKind.TIME: "Time"}
POLICIES = {ConflictChoice.SUPERSEDE: ConflictPolicy.SUPERSEDE, ConflictChoice.KEEP_BOTH: ConflictPolicy.CONFLICT}
# Relationship types the graph uses for something else than a predicate's mirror: an edge of
# one of these names would be read as that.
RESERVED_EDGES = frozenset({
    "ABOUT", "WAS", "SUPERSEDES", "WRITTEN_BY", "DERIVED", "RETIRED", "BETWEEN", "SETTLED_FOR", "HAS_TRUST",
    "CONSULTED", "WROTE", "IN", "HAS_SESSION", "FOLLOWED_BY", "MENTIONS", "SAID", "PHRASED_AS", "HAS_TICKET",
    "TICKET_ABOUT", "TRIED_FIX", "FIXED_BY", "VISITS", "FOR_TICKET", "HANDED_OFF", "PICKED_UP", "CONNECTED_VIA",
    "PON", "UPLINK", "DROP", "AFFECTS", "IN_CITY", "IN_COUNTRY", "FIRST", "NEXT", "CASE_MOVED", "CASE_ARRIVED",
})

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d{1,3})?")
MAX_NUMBER_CHARS = 40


def check_number(value: str) -> str:
    """A number in one canonical form: "42", "-3.5", "1000000" (from "1e6"), "0.25" (from ".250")."""
    text = value.strip().replace("_", "")
    if not _NUMBER.fullmatch(text):
        raise InvalidValue(f"{value!r} is not a number (digits with an optional sign, decimal point and exponent: "
                           "42, -3.5, 1e6)")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise InvalidValue(f"{value!r} is not a number") from None
    out = "0" if number.is_zero() else format(number.normalize(), "f")
    if len(out) > MAX_NUMBER_CHARS:
        raise InvalidValue(f"{value!r} is too large or too precise (at most {MAX_NUMBER_CHARS} characters written out)")
    return out


def check_time_value(value: str) -> str:
    """A time as ISO 8601 with an offset, in one canonical form: UTC, "2026-09-05T10:00:00+00:00"."""
    try:
        t = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InvalidValue(f"{value!r} is not an ISO 8601 time with an offset (2026-09-05T10:00:00+00:00)") from None
    if t.tzinfo is None:
        raise InvalidValue(f"{value!r} has no offset: write it as 2026-09-05T10:00:00+00:00")
    check_time(t, "object")
    return t.astimezone(timezone.utc).isoformat()


CHECKS = {ObjectKind.TEXT: as_is, ObjectKind.ENTITY: as_is, ObjectKind.NUMBER: check_number,
          ObjectKind.TIME: check_time_value}


class PredicateDefinition(BaseModel):
    """What `PUT .../predicates/{name}` takes (only `cardinality` is required)."""

    model_config = ConfigDict(extra="forbid")

    cardinality: Cardinality = Field(description="single: one value at a time (a new one supersedes, or with "
                                     "keep_both conflicts); multi: many values side by side")
    object: ObjectKind = Field(default=ObjectKind.TEXT, description="text: a name-like text value; entity: a "
                               "thing in the graph, mirrored as a typed edge named after the predicate; number; "
                               "time: ISO 8601 with an offset (numbers and times are stored in one canonical form)")
    conflict: ConflictChoice = Field(default=ConflictChoice.SUPERSEDE, description="what another agent's different "
                                     "value of a single-valued predicate does: supersede the current one, or "
                                     "keep_both (a claim beside it, and a Conflict opens for a person to settle)")
    description: text_type(MAX_DESCRIPTION) | None = Field(  # type: ignore[valid-type]
        default=None, description="what the predicate means, for the people and agents that write it")


class PredicateView(BaseModel):
    name: str
    builtin: bool = Field(description="built in (the desk's and the engine's vocabulary), or the tenant's own")
    cardinality: Cardinality
    object: ObjectKind = Field(description="the object type (a built-in predicate's objects are typed entities)")
    object_type: str = Field(description="the label of its objects in the graph")
    conflict: ConflictChoice
    edge: str | None = Field(description="the typed edge that mirrors a current fact; null: not mirrored")
    description: str | None = None
    retired: bool = Field(default=False, description="retired: refused on writes, its facts are still read")


class PredicateList(BaseModel):
    predicates: list[PredicateView] = Field(description="built-in first, then the tenant's own, by name")
    version: int = Field(description="the tenant's vocabulary version: every change moves it")


# ---------------------------------------------------------------------------------------------
# the stored definitions


@dataclass(frozen=True)
class _Stored:
    name: str
    definition: PredicateDefinition
    retired: bool

    @classmethod
    def of(cls, row: dict[str, Any]) -> _Stored:
        return cls(row["name"], PredicateDefinition(cardinality=row["cardinality"], object=row["object"],
                                                    conflict=row["conflict"], description=row.get("description")),
                   bool(row.get("retired")))

    def predicate(self) -> Predicate:
        d = self.definition
        return Predicate(self.name, SUBJECT_TYPE, OBJECT_TYPES[d.object], d.cardinality, POLICIES[d.conflict],
                         self.name.upper() if d.object is ObjectKind.ENTITY else None, CHECKS[d.object])

    def view(self) -> PredicateView:
        p = self.predicate()
        d = self.definition
        return PredicateView(name=self.name, builtin=False, cardinality=d.cardinality, object=d.object,
                             object_type=p.object_type, conflict=d.conflict, edge=p.edge,
                             description=d.description, retired=self.retired)


@dataclass(frozen=True)
class _Read:
    version: int
    stamp: str
    stored: dict[str, _Stored]

    def vocabulary(self) -> Vocabulary:
        own = {n: s.predicate() for n, s in self.stored.items() if not s.retired and builtin(n) is None}
        retired = {n: s.predicate() for n, s in self.stored.items() if s.retired and builtin(n) is None}
        return Vocabulary(own=own, retired=retired, version=self.stamp)


async def _read(client: GraphClient, tenant: str) -> _Read:
    row = (await client.run(tenant, q.VOCABULARY_READ, {"key": _KEY}))[0]
    stored = {}
    for r in row["predicates"] or ():
        try:
            stored[r["name"]] = _Stored.of(r)
        except (ValueError, KeyError):  # a node this version cannot read: left out, never fatal
            continue
    return _Read(row["version"] or 0, row["stamp"] or "", stored)


# ---------------------------------------------------------------------------------------------
# the cache every write and read goes through


@dataclass
class _Cached:
    vocabulary: Vocabulary
    checked: float  # time.monotonic() when it was read or last found current


def _cache(client: GraphClient) -> dict[str, _Cached]:
    return client.kept("memory.predicates.vocabularies", dict)


def forget(client: GraphClient, tenant: str) -> None:
    """Drops this process's copy of the tenant's vocabulary (after a change it made)."""
    _cache(client).pop(tenant, None)


async def vocabulary(client: GraphClient, tenant: str, names: Iterable[object] = (), *, every: bool = False,
                     write: bool = True) -> Vocabulary:
    """The vocabulary a write or read of `names` goes by (see the module's docstring for how it
    stays current). Names that are all built in need nothing of the tenant: `BUILT_IN`, no read.
    `every`: a read of all of a subject's predicates, which includes the tenant's own. `write`:
    a retired predicate is looked for again (it may have been defined anew); reads take it as is."""
    wanted = [n for n in names if builtin(n) is None]
    if not wanted and not every:
        return BUILT_IN
    cache = _cache(client)
    hit = cache.get(tenant)
    now = time.monotonic()
    if hit is not None:
        v = hit.vocabulary
        known = all(isinstance(n, str) and (n in v.own or (not write and n in v.retired)) for n in wanted)
        if known and now - hit.checked < CHECK_EVERY_S:
            return v
        if known:
            rows = await client.run(tenant, q.VOCABULARY_STAMP, {"key": _KEY})
            if ((rows[0]["stamp"] if rows else None) or "") == v.version:
                hit.checked = now
                return v
    v = (await _read(client, tenant)).vocabulary()
    cache[tenant] = _Cached(v, now)
    return v


# ---------------------------------------------------------------------------------------------
# defining, listing, retiring


def check_predicate_name(name: object) -> str:
    """A name a tenant may define: the pattern, not a built-in one, an edge of its own."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise InvalidInput(f"a predicate's name must match {NAME_PATTERN} (lower case letters, digits and _, "
                           "starting with a letter, 2-48 characters)", code="invalid_predicate_name")
    if builtin(name) is not None:
        raise AlreadyExists(f"{name!r} is a built-in predicate: it cannot be redefined; choose another name",
                            code="builtin_predicate")
    if name.upper() in RESERVED_EDGES | {p.edge for p in (*REGISTRY.values(), *TURN_PREDICATES.values())}:
        raise InvalidInput(f"{name!r} would be mirrored as {name.upper()}, a relationship the graph uses for "
                           "something else; choose another name", code="reserved_predicate_name")
    return name


def _new_stamp() -> str:
    return uuid.uuid4().hex


async def define(client: GraphClient, tenant: str, name: str, definition: PredicateDefinition, *,
                 agent: str) -> tuple[PredicateView, bool]:
    """Defines `name` for the tenant, or changes its object type, policy or description; returns
    its view and whether it is new (or back from retirement). The same definition again changes
    nothing. A change of cardinality while it has facts: StateConflict with their count."""
    tenant = validate_tenant(tenant)
    name = check_predicate_name(name)
    wanted = PredicateDefinition.model_validate(definition.model_dump())
    for _ in range(MAX_ATTEMPTS):
        read = await _read(client, tenant)
        known = read.stored.get(name)
        after = _Stored(name, wanted, retired=False)
        if known == after:
            return after.view(), False
        recut = known is not None and known.definition.cardinality is not wanted.cardinality
        if recut:
            facts = (await client.run(tenant, q.PREDICATE_FACTS, {"name": name}))[0]["facts"]
            if facts:
                raise StateConflict(
                    f"predicate {name!r} has {facts} fact{'s' if facts != 1 else ''} written as "
                    f"{known.definition.cardinality.value}-valued: its cardinality cannot change while they exist "
                    "(retiring it keeps them); define a predicate of another name instead",
                    code="cardinality_in_use")
        params = {"key": _KEY, "expected": read.stamp, "stamp": _new_stamp(), "name": name, "now_ms": now_ms(),
                  "agent": agent, "cardinality": wanted.cardinality.value, "object": wanted.object.value,
                  "conflict": wanted.conflict.value, "description": wanted.description}
        if await client.run(tenant, q.PREDICATE_PUT_NO_FACTS if recut else q.PREDICATE_PUT, params):
            forget(client, tenant)
            return after.view(), known is None or known.retired
    raise StateConflict(f"the vocabulary of {tenant!r} kept changing under this definition; try again")


async def retire(client: GraphClient, tenant: str, name: str) -> bool:
    """Retires the tenant's predicate `name`: later writes of it are refused, its facts stay.
    Returns False when it was retired already; NotFound when the tenant never defined it."""
    tenant = validate_tenant(tenant)
    if builtin(name) is not None:
        raise AlreadyExists(f"{name!r} is a built-in predicate: it cannot be retired", code="builtin_predicate")
    for _ in range(MAX_ATTEMPTS):
        read = await _read(client, tenant)
        known = read.stored.get(name)
        if known is None:
            raise NotFound(f"the tenant has no predicate {name!r} of its own")
        if known.retired:
            return False
        if await client.run(tenant, q.PREDICATE_RETIRE, {"key": _KEY, "expected": read.stamp, "stamp": _new_stamp(),
                                                         "name": name, "now_ms": now_ms()}):
            forget(client, tenant)
            return True
    raise StateConflict(f"the vocabulary of {tenant!r} kept changing under this retirement; try again")


def builtin_view(p: Predicate) -> PredicateView:
    return PredicateView(
        name=p.name, builtin=True, cardinality=p.cardinality, object=ObjectKind.ENTITY, object_type=p.object_type,
        conflict=ConflictChoice.KEEP_BOTH if p.policy is ConflictPolicy.CONFLICT else ConflictChoice.SUPERSEDE,
        edge=p.edge, description=f"built in: a {p.subject_type}'s {p.object_type}")


async def list_predicates(client: GraphClient, tenant: str) -> PredicateList:
    """The built-in predicates and the tenant's own (retired ones marked)."""
    tenant = validate_tenant(tenant)
    read = await _read(client, tenant)
    builtins = sorted({**TURN_PREDICATES, **REGISTRY}.values(), key=lambda p: p.name)
    own = [s.view() for n, s in sorted(read.stored.items()) if builtin(n) is None]
    return PredicateList(predicates=[builtin_view(p) for p in builtins] + own, version=read.version)


__all__ = [
    "CHECK_EVERY_S", "ConflictChoice", "ObjectKind", "PredicateDefinition", "PredicateList", "PredicateView",
    "check_number", "check_predicate_name", "check_time_value", "define", "forget", "list_predicates", "retire",
    "vocabulary",
]
