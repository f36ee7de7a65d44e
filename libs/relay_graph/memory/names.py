"""Reading by name: which entity a name a *reader* gave stands for, and how sure that is.

Writes never come here: a write addresses the exact normal-form key it was given (or an id), so
a write about "esha rao" can never land on "asha rao". Reads may be forgiving, and say so:

1. the entity whose key is the name (case, spacing and punctuation aside): `how="exact"`;
2. for customers, the customers whose current `name` fact is exactly the name: `how="name"`;
3. else the names spelt alike (`entities.close_names`: similarity >= FUZZY_THRESHOLD, numbers
   equal), and the customers they name: `how="fuzzy"`.

The first step that finds anything decides. One entity found: the read is answered about it and
the answer carries a `Matched` note (unless it was exact). Two or more: the answer is `Ambiguous`
("did you mean asha rao or esha rao?") with the candidates, and nothing is read for any of them:
never a silent pick. An id Relay gave a customer (`c-` and hex) is never matched fuzzily."""

from __future__ import annotations

from dataclasses import dataclass
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import close_names, entity_uid, is_customer_id, name_key, search_text
from relay_graph.runtime.errors import AmbiguousName, InvalidValue
from relay_graph.memory.models import Ambiguous, Candidate, Matched
from relay_graph.memory.queries import names as q
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant

CUSTOMER = "Customer"
PERSON_NAME = "PersonName"


@dataclass(frozen=True)
class Hit:
    uid: str
    id: str  # the entity's name: a customer's id (or an old tenant's name key)
    name: str  # the name that matched
    score: float = 1.0


@dataclass(frozen=True)
class NameMatch:
    asked: str
    how: str | None  # exact | name | fuzzy | None (nothing)
    hits: tuple[Hit, ...] = ()

    @property
    def one(self) -> Hit | None:
        return self.hits[0] if len(self.hits) == 1 else None

    @property
    def matched(self) -> Matched | None:
        hit = self.one
        if hit is None or self.how in (None, "exact"):
            return None
        return Matched(asked=self.asked, id=hit.id, name=hit.name, how=self.how)  # type: ignore[arg-type]

    @property
    def ambiguous(self) -> Ambiguous | None:
        if len(self.hits) < 2:
            return None
        return Ambiguous(asked=self.asked, message=did_you_mean(self.hits),
                         candidates=[Candidate(id=h.id, name=h.name) for h in self.hits])


def did_you_mean(hits: tuple[Hit, ...] | list[Hit]) -> str:
    """"did you mean asha rao or esha rao?"; a name two subjects share is told apart by their ids."""
    labels = [h.name if name_key(h.id) == name_key(h.name) else f"{h.name} ({h.id})" for h in hits]
    return "did you mean " + ", ".join(labels[:-1]) + " or " + labels[-1] + "?"


def _dedup(hits: list[Hit]) -> tuple[Hit, ...]:
    best: dict[str, Hit] = {}
    for h in hits:
        if h.uid not in best or h.score > best[h.uid].score:
            best[h.uid] = h
    return tuple(sorted(best.values(), key=lambda h: (-h.score, h.name, h.id)))


def _customers(pairs: list | None, name: str, score: float) -> list[Hit]:
    return [Hit(uid, cid, name, score) for uid, cid in pairs or () if uid is not None]


async def match(client: GraphClient, tenant: str, name: object, entity_type: str = CUSTOMER, *,
                what: str = "name", together: bool = False) -> NameMatch:
    """What `name` stands for among entities of `entity_type` (rules in the module docstring).
    `together`: steps 1 and 2 answer as one (the customer keyed by the name and those whose name
    it is: "customers called ..." lists them all)."""
    tenant = validate_tenant(tenant)
    text = clean_text(name, what)
    key = name_key(text)
    if not key:
        raise InvalidValue(f"{what} {text!r} has no letters or digits")
    customers = entity_type == CUSTOMER
    rows = await client.run(tenant, q.NAME_MATCH, {
        "own_uid": entity_uid(entity_type, key),
        "name_uid": entity_uid(PERSON_NAME, key) if customers else "",
        "search": None if is_customer_id(text) else search_text(text),
        "types": [entity_type, PERSON_NAME] if customers else [entity_type],
    })
    row = rows[0] if rows else {}
    own = [Hit(row["own_uid"], row["own_name"], row["own_name"])] if row.get("own_uid") is not None else []
    if own and not together:
        return NameMatch(text, "exact", tuple(own))
    named = _dedup(own + _customers(row.get("named"), row.get("named_as") or text, 1.0))
    if named:
        return NameMatch(text, "exact" if own and len(named) == 1 else "name", named)
    close = row.get("close") or []
    by_uid = {c[0]: c for c in close}
    hits: list[Hit] = []
    for score, uid, cand in close_names(text, [(c[0], c[1]) for c in close]):
        _, node_name, node_type, named_by = by_uid[uid]
        if node_type == PERSON_NAME:
            hits += _customers(named_by, node_name, score)
        else:
            hits.append(Hit(uid, node_name, node_name, score))
    found = _dedup(hits)
    return NameMatch(text, "fuzzy" if found else None, found)


async def customer_names(client: GraphClient, tenant: str, uids: list[str]) -> dict[str, list[str]]:
    """The current names of the customers `uids` (uid -> names, for answers listing customers)."""
    if not uids:
        return {}
    rows = await client.run(validate_tenant(tenant), q.CUSTOMER_NAMES, {"uids": uids})
    return {r["uid"]: sorted(n for n in r["names"] or () if n) for r in rows}


async def customers_named(client: GraphClient, tenant: str, names: list[str]) -> dict[str, NameMatch]:
    """For writes: each name (a subject that is not a customer id) with the customers that hold it
    exactly, by key (an older tenant's customer) or by their current `name` fact: one hit, the write
    lands on that customer; two or more, it is ambiguous; none, the name is a subject of its own.
    Exact normal forms only: a write never lands on a customer spelt alike."""
    asks = {n: name_key(n) for n in dict.fromkeys(names) if not is_customer_id(n)}
    asks = {n: k for n, k in asks.items() if k}
    if not asks:
        return {}
    rows = await client.run(validate_tenant(tenant), q.CUSTOMERS_NAMED, {
        "asks": [[entity_uid(CUSTOMER, k), entity_uid(PERSON_NAME, k)] for k in asks.values()]})
    by_own = {r["own_uid"]: r for r in rows}
    found: dict[str, NameMatch] = {}
    for name, key in asks.items():
        row = by_own.get(entity_uid(CUSTOMER, key), {})
        own = [Hit(row["own"], row["own_name"], row["own_name"])] if row.get("own") is not None else []
        hits = _dedup(own + _customers(row.get("named"), name, 1.0))
        if hits:
            found[name] = NameMatch(name, "exact" if own and len(hits) == 1 else "name", hits)
    return found


async def subjects_for_writes(client: GraphClient, tenant: str, subjects: list[str]
                              ) -> dict[str, "str | AmbiguousName"]:
    """The contract's exact-name rule for writes: of `subjects`, each name exactly one customer holds
    (by their `name` fact) -> that customer's id; each name two or more hold -> `AmbiguousName` (the
    write must not happen). Subjects not in the answer (ids, names nobody holds, an older tenant's
    customer keyed by the name) are written as given. One read for all; none when all are ids."""
    answer: dict[str, str | AmbiguousName] = {}
    for name, match in (await customers_named(client, tenant, subjects)).items():
        if len(match.hits) > 1:
            answer[name] = AmbiguousName(
                f"{name!r} is the name of {len(match.hits)} customers: {did_you_mean(match.hits)} "
                "Write by the customer's id.", [{"id": h.id, "name": h.name} for h in match.hits])
        elif match.how != "exact":
            answer[name] = match.hits[0].id
    return answer


async def subject_for_write(client: GraphClient, tenant: str, subject: str) -> str:
    """One write's subject by the exact-name rule (`subjects_for_writes`); raises AmbiguousName."""
    found = (await subjects_for_writes(client, tenant, [subject])).get(subject, subject)
    if isinstance(found, AmbiguousName):
        raise found
    return found


__all__ = ["customers_named", "subject_for_write", "subjects_for_writes", "Matched", "Candidate", "Ambiguous", "Hit", "NameMatch", "match", "did_you_mean", "customer_names"]
