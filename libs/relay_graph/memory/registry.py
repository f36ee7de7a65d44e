"""The predicate registry: every predicate Relay knows, its subject and object types, whether it
holds one value or many, what happens when another agent disagrees, and how its values are checked.

Adding a predicate is one `register(Predicate(...))` line. Labels and relationship types here are
code constants; they are the only identifiers ever placed into Cypher text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable

from relay_graph.runtime.errors import InvalidValue, UnknownPredicate
from relay_graph.memory import inputs

MAX_VALUE_CHARS = 200
_IDENT = re.compile(r"^[A-Z][A-Za-z]*$|^[A-Z_]+$")


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


_SYMPTOMS = re.compile(
    r"\b(slow|slowness|lag|laggy|drop(s|ping|ped)?|disconnect\w*|buffer\w*|outage|down|no internet|"
    r"not working|broken|interference|weak|signal|error|problem|issue)\b",
    re.I,
)


def check_router(value: str) -> str:
    if _SYMPTOMS.search(value):
        raise InvalidValue(f"{value!r} reads like a symptom, not a router model")
    if not re.search(r"[A-Za-z]", value):
        raise InvalidValue(f"{value!r} is not a router model")
    return value


def check_device(value: str) -> str:
    if _SYMPTOMS.search(value):
        raise InvalidValue(f"{value!r} reads like a symptom, not a device")
    return value


def check_phone(value: str) -> str:
    digits = re.sub(r"[\s().-]", "", value)
    if not re.fullmatch(r"\+?\d{7,15}", digits):
        raise InvalidValue(f"{value!r} does not look like a phone number (7-15 digits, optional +)")
    return digits


def check_email(value: str) -> str:
    if not re.fullmatch(r"[^@\s]{1,64}@[^@\s]+\.[A-Za-z]{2,}", value):
        raise InvalidValue(f"{value!r} does not look like an email address")
    return value.lower()


CONTACT_METHODS = {"phone", "email", "sms", "whatsapp", "chat"}


def check_contact(value: str) -> str:
    v = value.lower()
    if v not in CONTACT_METHODS:
        raise InvalidValue(f"prefers_contact must be one of {sorted(CONTACT_METHODS)}")
    return v


def check_plan(value: str) -> str:
    if _SYMPTOMS.search(value):
        raise InvalidValue(f"{value!r} reads like a symptom, not a plan")
    return value


def check_name(value: str) -> str:
    if re.search(r"\d", value):
        raise InvalidValue(f"{value!r} does not look like a person's name")
    return value


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
        for ident in (self.subject_type, self.object_type, self.edge):
            if not _IDENT.fullmatch(ident):
                raise ValueError(f"{ident!r} is not a safe label or relationship type")


REGISTRY: dict[str, Predicate] = {}
ENTITY_TYPES: set[str] = set()


def register(p: Predicate) -> Predicate:
    REGISTRY[p.name] = p
    ENTITY_TYPES.update((p.subject_type, p.object_type))
    return p


S, M = Cardinality.SINGLE, Cardinality.MULTI
SUP, CON = ConflictPolicy.SUPERSEDE, ConflictPolicy.CONFLICT

register(Predicate("name", "Customer", "PersonName", S, SUP, "NAMED", check_name,
                   claim="full name"))
register(Predicate("lives_in", "Customer", "City", S, CON, "LIVES_IN"))
register(Predicate("on_plan", "Customer", "Plan", S, CON, "ON_PLAN", check_plan))
register(Predicate("has_router", "Customer", "Router", S, CON, "HAS_ROUTER", check_router))
register(Predicate("owns_device", "Customer", "Device", M, SUP, "OWNS_DEVICE", check_device))
register(Predicate("phone", "Customer", "Phone", M, SUP, "HAS_PHONE", check_phone,
                   claim="phone number"))
register(Predicate("email", "Customer", "Email", M, SUP, "HAS_EMAIL", check_email,
                   claim="email address"))
register(Predicate("has_issue", "Customer", "Issue", M, SUP, "HAS_ISSUE"))
register(Predicate("prefers_contact", "Customer", "ContactMethod", S, SUP, "PREFERS_CONTACT", check_contact))

# What a turn of any conversation says about its speaker (memory/turn_facts.py files them from
# `POST /episodes` by rules). Kept apart from REGISTRY, the desk's predicates that its extractors
# are offered: a customer's chat never files them, and `get` knows both.
TURN_PREDICATES: dict[str, Predicate] = {}


def register_turn(p: Predicate) -> Predicate:
    TURN_PREDICATES[p.name] = p
    ENTITY_TYPES.update((p.subject_type, p.object_type))
    return p


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


def get(predicate: object) -> Predicate:
    if isinstance(predicate, str) and predicate in TURN_PREDICATES:
        return TURN_PREDICATES[predicate]
    if not isinstance(predicate, str) or predicate not in REGISTRY:
        known = sorted(REGISTRY) + sorted(TURN_PREDICATES)
        raise UnknownPredicate(f"unknown predicate {predicate!r}; known: {', '.join(known)}")
    return REGISTRY[predicate]
