"""The predicate registry: the mechanism by which a user of the engine declares its vocabulary. A
predicate has its subject and object types, holds one value or many, says what happens when
another agent disagrees, and how its values are checked.

The engine registers no predicate of its own: every one it could offer would name a subject type
(a customer, a person, a device) that belongs to the team using it, so the vocabulary is its
user's (the support desk's is `relay_graph.desk.vocabulary`). Adding a predicate is one
`register(Predicate(...))` call at the user's import; registering the same one again changes
nothing, a different one under a taken name is refused.

What is built from the registry (the statements naming its labels and edges, the tables of its
predicates) is built when first used and again after a later registration: `from_registry` and
`FromRegistry` cache a build by the registry's `generation()`. Labels and relationship types here
are checked identifiers; they are the only ones ever placed into Cypher text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import Enum
from collections.abc import Iterator, Mapping
from typing import Callable, Generic, TypeVar

from relay_graph.runtime.errors import UnknownPredicate
from relay_graph.memory import inputs

MAX_VALUE_CHARS = 200
_IDENT = re.compile(r"^[A-Z][A-Za-z]*$|^[A-Z_]+$")
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")  # a predicate's name is written into the batch statements' text


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
    edge: str  # the typed relationship that mirrors a current fact
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
            if not _IDENT.fullmatch(ident):
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


def predicates_enum(schema: dict) -> None:
    """Fills a JSON schema's `enum` with the registered predicates when the schema is made (as
    pydantic's `json_schema_extra`), so a schema lists what is registered then."""
    schema["enum"] = sorted(REGISTRY)


def get(predicate: object) -> Predicate:
    if isinstance(predicate, str) and predicate in TURN_PREDICATES:
        return TURN_PREDICATES[predicate]
    if not isinstance(predicate, str) or predicate not in REGISTRY:
        known = sorted(REGISTRY) + sorted(TURN_PREDICATES)
        raise UnknownPredicate(f"unknown predicate {predicate!r}; known: {', '.join(known)}")
    return REGISTRY[predicate]
