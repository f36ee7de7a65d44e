"""The entities a fact write addresses: a name checked and keyed exactly (`checked_name`), and the
entity on file with that key, or a new one (`resolve_entity`, `EntityRef`). A write never lands on an
entity spelt alike (reads that forgive misspellings use `names.match`)."""

from __future__ import annotations

from dataclasses import dataclass

from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.memory.queries import facts as q
from relay_graph.memory.registry import Predicate, clean_text, entity_types
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, InvalidValue
from relay_graph.runtime.tenancy import validate_tenant


@dataclass(frozen=True)
class EntityRef:
    """A name as a write addresses it: the entity's uid and display name. `exists` is False for an
    entity a write is about to create (nothing in the graph has that key)."""

    uid: str
    name: str
    type: str
    exists: bool = True


@dataclass(frozen=True)
class CheckedName:
    """A checked name: the exact key a write addresses."""

    text: str
    key: str
    type: str

    @property
    def uid(self) -> str:
        return entity_uid(self.type, self.key)

    def as_new(self) -> EntityRef:
        return EntityRef(self.uid, self.text, self.type, exists=False)


def checked_name(value: object, entity_type: str, what: str) -> CheckedName:
    text = clean_text(value, what)
    key = name_key(text)
    if not key:
        raise InvalidValue(f"{what} {text!r} has no letters or digits")
    return CheckedName(text, key, entity_type)


def subject_name(value: object, p: Predicate) -> CheckedName:
    return checked_name(value, p.subject_type, "subject")


def object_name(value: object, p: Predicate) -> CheckedName:
    text = p.check(clean_text(value, "object"))
    return checked_name(text, p.object_type, "object")


def entity_ref(name: CheckedName, found: str | None) -> EntityRef:
    """The entity a name is: the one on file with its key, else a new one."""
    return EntityRef(name.uid, found, name.type) if found is not None else name.as_new()


async def find_entity(client: GraphClient, tenant: str, name: str, entity_type: str) -> EntityRef | None:
    """The entity of `entity_type` (a registry type such as "Customer", "City", "Router") whose
    key is exactly `name`'s normal form (case, spacing, punctuation aside), never one spelt alike
    (reads that forgive misspellings use `names.match`); None when there is none. A read."""
    tenant = validate_tenant(tenant)
    n = _typed_name(name, entity_type)
    rows = await client.run(tenant, q.ENTITY_LOOKUP, {"s_uid": n.uid})
    row = rows[0] if rows else {}
    return EntityRef(n.uid, row["name"], entity_type) if row.get("name") is not None else None


async def resolve_entity(
    client: GraphClient,
    tenant: str,
    name: str,
    entity_type: str,
    *,
    create: bool = False,
) -> EntityRef | None:
    """`find_entity`, and with `create` a new entity when there is none: MERGE
    `(:Entity:<Type> {uid, name, name_key, type})`."""
    found = await find_entity(client, tenant, name, entity_type)
    if found is not None or not create:
        return found
    n = _typed_name(name, entity_type)
    rows = await client.run(
        validate_tenant(tenant), q.ENTITY_MERGE[entity_type], {"uid": n.uid, "name": n.text, "key": n.key, "type": n.type}
    )
    return EntityRef(rows[0]["uid"], rows[0]["name"], entity_type)


def _typed_name(name: str, entity_type: str) -> CheckedName:
    known = entity_types()
    if entity_type not in known:
        raise InvalidInput(f"unknown entity type {entity_type!r}; known: {', '.join(sorted(known))}")
    return checked_name(name, entity_type, "name")
