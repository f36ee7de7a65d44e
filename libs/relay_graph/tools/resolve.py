"""Names in a tool's arguments, resolved against the graph before the tool runs any query.

A tool asks the `Resolver` for each name it was given (customer, entity, node, ticket, issue
kind); each lookup is one indexed read. Every name is looked up, then `done()` stops the tool if
any of them matched nothing (the `unknown_name` shape, listing them all) or stands for two or more
(the `ambiguous` shape: "did you mean asha rao or esha rao?"), so nothing else runs and nothing is
written. Reads forgive: a customer is their id (or an old tenant's name key), else the customer
their name or a name spelt alike stands for (`names.match`), and the answer says what it matched
(`matched`). Writes never do: `write_subject` is the exact key given."""

from __future__ import annotations

from dataclasses import dataclass

from relay_graph.memory import names
from relay_graph.desk.network import store as network
from relay_graph.desk.tickets import store as tickets
from relay_graph.memory.entities import name_key
from relay_graph.runtime.errors import NotFound
from relay_graph.memory.entity_refs import EntityRef, find_entity
from relay_graph.memory.models import Ambiguous
from relay_graph.desk.network.models import NetNode
from relay_graph.usecases.provenance import entity_by_key
from relay_graph.memory.registry import clean_text
from relay_graph.desk.tickets.models import Ticket
from relay_graph.usecases.context import Call
from relay_graph.tools.envelope import UnknownName

CUSTOMER = "Customer"
ISSUE = "Issue"


class UnknownNames(Exception):
    """Raised by `Resolver.done()`; `call_tool` turns it into the unknown_name (or ambiguous) envelope."""

    def __init__(self, unknown: list[UnknownName], ambiguous: list[Ambiguous] | None = None) -> None:
        parts = [f"{u.argument}={u.name!r}" for u in unknown] + [a.message for a in ambiguous or ()]
        super().__init__(", ".join(parts))
        self.unknown = unknown
        self.ambiguous = list(ambiguous or ())


@dataclass
class Resolver:
    ctx: Call

    def __post_init__(self) -> None:
        self.unknown: list[UnknownName] = []
        self.ambiguous: list[Ambiguous] = []

    def _miss(self, argument: str, kind: str, name: str) -> None:
        self.unknown.append(UnknownName(argument=argument, kind=kind, name=name))

    def done(self) -> None:
        if self.unknown or self.ambiguous:
            raise UnknownNames(list(self.unknown), list(self.ambiguous))

    async def _read(self, name: str, entity_type: str, argument: str, kind: str) -> EntityRef | None:
        found = await names.match(self.ctx.client, self.ctx.tenant, name, entity_type, what=argument)
        if found.ambiguous is not None:
            self.ambiguous.append(found.ambiguous)
            return None
        if found.one is None:
            self._miss(argument, kind, name)
            return None
        if found.matched is not None:
            self.ctx.matched.append(found.matched)
        return EntityRef(found.one.uid, found.one.id, entity_type)

    async def customer(self, name: str, argument: str = "customer") -> EntityRef | None:
        """A customer to read about: their id (or key), else the one customer their name, or a
        name spelt alike, stands for."""
        return await self._read(name, CUSTOMER, argument, "customer")

    async def write_subject(self, name: str, argument: str = "subject") -> EntityRef | None:
        """A customer a write is about: exactly the key given, never one spelt alike; None (and
        unknown_name) when no customer has it."""
        ref = await find_entity(self.ctx.client, self.ctx.tenant, name, CUSTOMER)
        if ref is None:
            self._miss(argument, "customer", name)
        return ref

    async def entity(self, name: str, argument: str = "subject") -> EntityRef | None:
        """A customer (as `customer` reads one) or, failing that, an entity of any type with exactly
        this normal-form name (a city, a plan, a router)."""
        found = await names.match(self.ctx.client, self.ctx.tenant, name, CUSTOMER, what=argument)
        if found.ambiguous is not None:
            self.ambiguous.append(found.ambiguous)
            return None
        if found.one is not None:
            if found.matched is not None:
                self.ctx.matched.append(found.matched)
            return EntityRef(found.one.uid, found.one.id, CUSTOMER)
        key = name_key(clean_text(name, argument))
        row = await entity_by_key(self.ctx, key)
        if row is not None:
            return EntityRef(row["uid"], row["name"], row["type"])
        self._miss(argument, "entity", name)
        return None

    async def issue(self, kind: str, argument: str = "issue_kind") -> EntityRef | None:
        """An issue kind the desk has seen ("no internet", "wifi slow"), misspellings included."""
        return await self._read(kind, ISSUE, argument, "issue")

    async def node(self, node_id: str, argument: str = "node") -> NetNode | None:
        try:
            return await network.get_node(self.ctx.client, self.ctx.tenant, node_id)
        except NotFound:
            self._miss(argument, "node", node_id)
            return None

    async def ticket(self, ticket_id: str, argument: str = "ticket_id") -> Ticket | None:
        try:
            return await tickets.peek_ticket(self.ctx.client, self.ctx.tenant, ticket_id)
        except NotFound:
            self._miss(argument, "ticket", ticket_id)
            return None
