"""The support desk's vocabulary: the predicates its agents and customers' chats write about a
customer, each with the check that keeps a wrong kind of value out ("slow" is no router model).
Registered with the engine's registry when the desk is imported (`relay_graph.desk` imports this
module), so every desk process (gateway, intake, resolver, netops, the relay CLI, the MCP server)
has it before its first write; registering again is a no-op."""

from __future__ import annotations

import re

from relay_graph.memory.registry import Cardinality, ConflictPolicy, Predicate, register
from relay_graph.runtime.errors import InvalidValue

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


def _not_a_symptom(what: str):
    """A check that refuses a symptom given as a `what` ("slow since monday" as a plan)."""
    def check(value: str) -> str:
        if _SYMPTOMS.search(value):
            raise InvalidValue(f"{value!r} reads like a symptom, not a {what}")
        return value

    check.__name__ = f"check_{what}"
    return check


check_device = _not_a_symptom("device")


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


check_plan = _not_a_symptom("plan")


def check_name(value: str) -> str:
    if re.search(r"\d", value):
        raise InvalidValue(f"{value!r} does not look like a person's name")
    return value


def check_household(value: str) -> str:
    if not re.fullmatch(r"\d{1,2}", value.strip()) or not 0 < int(value) <= 20:
        raise InvalidValue(f"{value!r} is not a number of people (1-20)")
    return str(int(value))


def check_answer(value: str) -> str:
    """A raw answer kept against the question it answers ("has_router: the grey box by the tv")."""
    if not re.match(r"[a-z_]{2,48}: \S", value) or len(value) > 300:
        raise InvalidValue(f"{value!r} is not '<question>: <answer>' (at most 300 characters)")
    return value


S, M = Cardinality.SINGLE, Cardinality.MULTI
SUP, CON = ConflictPolicy.SUPERSEDE, ConflictPolicy.CONFLICT

PREDICATES: tuple[Predicate, ...] = (
    Predicate("name", "Customer", "PersonName", S, SUP, "NAMED", check_name, claim="full name"),
    Predicate("lives_in", "Customer", "City", S, CON, "LIVES_IN"),
    Predicate("on_plan", "Customer", "Plan", S, CON, "ON_PLAN", check_plan),
    Predicate("has_router", "Customer", "Router", S, CON, "HAS_ROUTER", check_router),
    Predicate("owns_device", "Customer", "Device", M, SUP, "OWNS_DEVICE", check_device),
    Predicate("phone", "Customer", "Phone", M, SUP, "HAS_PHONE", check_phone, claim="phone number"),
    Predicate("email", "Customer", "Email", M, SUP, "HAS_EMAIL", check_email, claim="email address"),
    Predicate("has_issue", "Customer", "Issue", M, SUP, "HAS_ISSUE"),
    Predicate("prefers_contact", "Customer", "ContactMethod", S, SUP, "PREFERS_CONTACT", check_contact),
    # what customers tell the desk in answer to its questions, and what they ask it for
    Predicate("lives_in_area", "Customer", "Neighbourhood", S, SUP, "LIVES_IN_AREA", _not_a_symptom("area")),
    Predicate("household_size", "Customer", "HouseholdSize", S, SUP, "HOUSEHOLD_SIZE", check_household,
              claim="number of people at home"),
    Predicate("prefers_time", "Customer", "TimeOfDay", S, SUP, "PREFERS_TIME", _not_a_symptom("time"),
              claim="preferred time to be contacted"),
    Predicate("wants_plan", "Customer", "Plan", S, SUP, "WANTS_PLAN", check_plan),
    Predicate("answered", "Customer", "Answer", M, SUP, "ANSWERED", check_answer),
)
NAMES: tuple[str, ...] = tuple(sorted(p.name for p in PREDICATES))

for _p in PREDICATES:
    register(_p)
