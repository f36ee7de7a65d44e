"""Names in a tool's arguments, resolved against the graph before the tool runs any query.

A tool asks the `Resolver` for each name it was given (customer, entity, node, ticket, issue
kind); each lookup is one indexed read. Every name is looked up, then `done()` stops the tool with
the `unknown_name` shape if any of them matched nothing, listing them all, so nothing else runs and
nothing is written. Resolution is also what makes the later reads exact: a misspelt customer
("alcie rao") is read as the one the graph knows ("alice rao")."""

from __future__ import annotations

from dataclasses import dataclass

from .. import network, tickets
from ..entities import name_key
from ..errors import NotFound
from ..facts import EntityRef, resolve_entity
from ..network_models import NetNode
from ..queries import provenance as q
from ..registry import clean_text
from ..ticket_models import Ticket
from .context import ToolContext
from .envelope import UnknownName

CUSTOMER = "Customer"
ISSUE = "Issue"


class UnknownNames(Exception):
    """Raised by `Resolver.done()`; `call_tool` turns it into the unknown_name envelope."""

    def __init__(self, unknown: list[UnknownName]) -> None:
        super().__init__(", ".join(f"{u.argument}={u.name!r}" for u in unknown))
        self.unknown = unknown


@dataclass
class Resolver:
    ctx: ToolContext

    def __post_init__(self) -> None:
        self.unknown: list[UnknownName] = []

    def _miss(self, argument: str, kind: str, name: str) -> None:
        self.unknown.append(UnknownName(argument=argument, kind=kind, name=name))

    def done(self) -> None:
        if self.unknown:
            raise UnknownNames(list(self.unknown))

    async def customer(self, name: str, argument: str = "customer") -> EntityRef | None:
        """A customer by name: the same normal form, else the closest known customer name."""
        ref = await resolve_entity(self.ctx.client, self.ctx.tenant, name, CUSTOMER)
        if ref is None:
            self._miss(argument, "customer", name)
        return ref

    async def entity(self, name: str, argument: str = "subject") -> EntityRef | None:
        """A customer (misspellings included) or, failing that, an entity of any type with exactly
        this normal-form name (a city, a plan, a router)."""
        ref = await resolve_entity(self.ctx.client, self.ctx.tenant, name, CUSTOMER)
        if ref is None:
            key = name_key(clean_text(name, argument))
            rows = await self.ctx.client.run(self.ctx.tenant, q.ENTITY_BY_KEY, {"key": key})
            if rows:
                ref = EntityRef(rows[0]["uid"], rows[0]["name"], rows[0]["type"])
        if ref is None:
            self._miss(argument, "entity", name)
        return ref

    async def issue(self, kind: str, argument: str = "issue_kind") -> EntityRef | None:
        """An issue kind the desk has seen ("no internet", "wifi slow"), misspellings included."""
        ref = await resolve_entity(self.ctx.client, self.ctx.tenant, kind, ISSUE)
        if ref is None:
            self._miss(argument, "issue", kind)
        return ref

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
