"""The predicate registry: the mechanism by which a user of the engine declares its vocabulary. A
predicate has its subject and object types, holds one value or many, says what happens when
another agent disagrees, and how its values are checked.

The engine registers no predicate of its own: every one it could offer would name a subject type
(a customer, a person, a device) that belongs to the team using it, so the vocabulary is its
user's (the support desk's is `relay_graph.desk.vocabulary`). Adding a predicate is one
`register(Predicate(...))` call at the user's import; registering the same one again changes
nothing, a different one under a taken name is refused.

These are the built-in predicates. A tenant adds its own at run time (`memory.predicates`, kept in
its graph); what one tenant may write is a `Vocabulary`: the built-in ones and its own. A tenant's
predicate never takes a built-in name.

What is built from the registry (the statements naming its labels and edges, the tables of its
predicates) is built when first used and again after a later registration: `from_registry` and
`FromRegistry` cache a build by the registry's `generation()`; a statement for a tenant's predicate
is built from its definition and kept (queries.facts.PerPredicate, batch_writes). Labels and
relationship types here are checked identifiers; they are the only ones ever placed into Cypher
text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import Enum
from collections.abc import Iterable, Iterator, Mapping
from typing import Callable, Generic, TypeVar

from relay_graph.runtime.errors import UnknownPredicate
from relay_graph.memory import inputs

MAX_VALUE_CHARS = 200
_IDENT = re.compile(r"^[A-Z][A-Za-z]*$|^[A-Z][A-Z0-9_]*$")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")  # a predicate's name is written into the batch statements' text
# A tenant's own predicate's name (memory/predicates.py; the API's PredicateName): its edge is its
# name in upper case, so it is a checked identifier too.
NAME_PATTERN = r"^[a-z][a-z0-9_]{1,47}$"
NAME = re.compile(NAME_PATTERN)


class Cardinality(str, Enum):
    SINGLE = "single"
    MULTI = "multi"


class ConflictPolicy(str, Enum):
    SUPERSEDE = "supersede"  # another agent's different value replaces the current one
    CONFLICT = "conflict"  # another agent's different value stands beside it; a Conflict opens


Check = Callable[[str], str]


def clean_text(value: object, what: str = "value") -> str:
    """The normal form of a name (NFKC, spaces collapsed) once inputs.check_name took it: the
    same rule as the API's `Name` type, so what the schema allows is what is stored."""
    return " ".join(unicodedata.normalize("NFKC", inputs.check_name(value, what, MAX_VALUE_CHARS)).split())


def as_is(value: str) -> str:
    return value


@dataclass(frozen=True)
class Predicate:
    name: str
    subject_type: str
    object_type: str
    cardinality: Cardinality
    policy: ConflictPolicy
    edge: str | None  # the typed relationship that mirrors a current fact (None: not mirrored)
    check: Check = field(default=as_is, compare=False)
    # The claim's fixed wording for identifier values: a sentence vector of a phone number or an
    # e-mail address means nothing, while "phone number" is what a question asks for. One text
    # (one vector) then serves every such fact; the value itself is found by exact lookup.
    claim: str | None = None

    @property
    def single(self) -> bool:
        return self.cardinality is Cardinality.SINGLE

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"{self.name!r} is not a predicate name (lower case, digits and _, up to 64)")
        for ident in (self.subject_type, self.object_type, self.edge):
            if ident is not None and not _IDENT.fullmatch(ident):
                raise ValueError(f"{ident!r} is not a safe label or relationship type")


REGISTRY: dict[str, Predicate] = {}
_generation = 0  # moves on every registration: what was built from the registry before is stale


def register(p: Predicate) -> Predicate:
    """Adds `p` to the vocabulary. The same predicate again (its check included) is a no-op, so
    every process may register its vocabulary at import; another one under a registered name is
    refused (two meanings of one predicate would share its slots and edges)."""
    global _generation
    known = REGISTRY.get(p.name)
    if known is not None:
        if known == p and known.check is p.check and known.claim == p.claim:
            return known
        raise ValueError(f"predicate {p.name!r} is registered already, as {known}")
    REGISTRY[p.name] = p
    _generation += 1
    return p


def generation() -> int:
    """How many predicates were registered so far: a build keyed by it is current."""
    return _generation


def entity_types() -> frozenset[str]:
    """Every subject and object type of the registered predicates."""
    return frozenset(t for p in every_predicate().values() for t in (p.subject_type, p.object_type))


T = TypeVar("T")
V = TypeVar("V")


def from_registry(build: Callable[[], T]) -> Callable[[], T]:
    """`build()`'s result, made from what is registered when it is first asked for and made again
    when a predicate was registered since."""
    made: list = [-1, None]

    def current() -> T:
        if made[0] != _generation:
            made[1], made[0] = build(), _generation
        return made[1]

    return current


class FromRegistry(Mapping[str, V], Generic[V]):
    """A read-only mapping built by `build()` from the registry (see `from_registry`)."""

    def __init__(self, build: Callable[[], dict[str, V]]):
        self._current = from_registry(build)

    def __getitem__(self, key: str) -> V:
        return self._current()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._current())

    def __len__(self) -> int:
        return len(self._current())

# The engine's own vocabulary: what a turn of any conversation says about its speaker
# (memory/turn_facts.py files them from `POST /episodes` by rules), generic to every user of the
# memory. Kept apart from REGISTRY, the user's vocabulary (the desk's: desk/vocabulary.py) that its
# extractors and schemas are offered: a customer's chat never files these, and `get` knows both.
TURN_PREDICATES: dict[str, Predicate] = {}


def register_turn(p: Predicate) -> Predicate:
    global _generation
    if TURN_PREDICATES.get(p.name) != p:
        TURN_PREDICATES[p.name] = p
        _generation += 1  # the write statements are built for these too
    return p


M, SUP = Cardinality.MULTI, ConflictPolicy.SUPERSEDE
register_turn(Predicate("has_pet", "Person", "Pet", M, SUP, "HAS_PET"))
register_turn(Predicate("knows", "Person", "Person", M, SUP, "KNOWS"))
register_turn(Predicate("visited", "Person", "Place", M, SUP, "VISITED"))
register_turn(Predicate("comes_from", "Person", "Place", M, SUP, "COMES_FROM"))
register_turn(Predicate("mentioned", "Person", "Work", M, SUP, "MENTIONED"))
register_turn(Predicate("does", "Person", "Activity", M, SUP, "DOES"))


def every_predicate() -> dict[str, Predicate]:
    """The desk's predicates and the turn facts' together: what the write statements are built for."""
    return REGISTRY | TURN_PREDICATES


def fixed_claims() -> dict[str, str]:
    """Predicate -> its fixed claim wording, for the predicates that have one."""
    return {p.name: p.claim for p in REGISTRY.values() if p.claim}


def predicates_help() -> str:
    """What a predicate name may be, for schemas and docs: the built-in predicates now, and how a
    tenant registers its own."""
    builtins = ", ".join(sorted(REGISTRY) + sorted(TURN_PREDICATES))
    return (f"a built-in predicate ({builtins}) or one the tenant registered with "
            "PUT /v1/tenants/{t}/predicates/{name} (the define_predicate tool); any other is refused "
            "with 422 `unknown_predicate`")


def predicates_described(schema: dict) -> None:
    """Describes a predicate name's JSON schema when it is made (as pydantic's `json_schema_extra`)."""
    schema["description"] = predicates_help()


def builtin(name: object) -> Predicate | None:
    """The built-in predicate of that name (the registered vocabulary and the turn facts'), if any:
    a tenant's own predicates (memory/predicates.py) never take one of these names."""
    if not isinstance(name, str):
        return None
    return TURN_PREDICATES.get(name) or REGISTRY.get(name)


# How a name that is not in the vocabulary becomes one, said wherever it is refused.
REGISTER_HINT = ('register it for the tenant with PUT /v1/tenants/{t}/predicates/{name} and a body '
                 '{"cardinality": "single"|"multi", "object": "text"|"entity"|"number"|"time", '
                 '"conflict": "supersede"|"keep_both", "description": "..."} (only cardinality is required)')


def unknown(predicate: object, own: Iterable[str] = ()) -> UnknownPredicate:
    """The error for a predicate that is neither built in nor among the tenant's `own`."""
    known = sorted(REGISTRY) + sorted(TURN_PREDICATES)
    theirs = f"; the tenant's own: {', '.join(sorted(own))}" if own else ""
    hint = REGISTER_HINT.replace("{name}", predicate) if isinstance(predicate, str) and NAME.fullmatch(predicate) \
        else REGISTER_HINT
    return UnknownPredicate(f"unknown predicate {predicate!r}; {hint}; built in: {', '.join(known)}{theirs}")


def get(predicate: object) -> Predicate:
    """A built-in predicate; UnknownPredicate otherwise (a tenant's own: `predicates.vocabulary`)."""
    found = builtin(predicate)
    if found is None:
        raise unknown(predicate)
    return found


@dataclass(frozen=True, eq=False)
class Vocabulary:
    """What one tenant may write and read: the built-in predicates and its own (defined through
    `memory.predicates`, kept in its graph). A retired predicate of its own is no longer written,
    while its facts are still read. `version` is the stamp of the tenant's vocabulary this was read
    at ("": it never defined a predicate)."""

    own: Mapping[str, Predicate] = field(default_factory=dict)
    retired: Mapping[str, Predicate] = field(default_factory=dict)
    version: str = ""

    def get(self, name: object) -> Predicate:
        """The predicate a write names; UnknownPredicate (saying how to register it) otherwise."""
        found = builtin(name) or (self.own.get(name) if isinstance(name, str) else None)
        if found is None:
            if isinstance(name, str) and name in self.retired:
                hint = REGISTER_HINT.replace("{name}", name)
                raise UnknownPredicate(f"unknown predicate {name!r}: the tenant retired it (its facts are still "
                                       f"read); to write it again, {hint}")
            raise unknown(name, self.own)
        return found

    def readable(self, name: object) -> Predicate:
        """The predicate a read names: a retired one of the tenant's own too."""
        if isinstance(name, str) and name in self.retired and builtin(name) is None:
            return self.retired[name]
        return self.get(name)

    def read_all(self) -> list[Predicate]:
        """What a read of all of a subject's facts covers: the registered predicates (the turn
        facts are read apart) and the tenant's own, retired ones included."""
        return list(REGISTRY.values()) + [p for p in (*self.own.values(), *self.retired.values())
                                          if builtin(p.name) is None]


BUILT_IN = Vocabulary()  # a tenant with no predicates of its own
