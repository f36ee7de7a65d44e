"""The grader: the diagnosis an agent records on a ticket, and the scoreboard that compares diagnoses
and fixes with the truth.

A fault is diagnosed right when every ticket whose diagnosis was recorded while the fault struck
that ticket's customer now carries the fault's kind (at least one such ticket). It is fixed proven
when a right action repaired it and the customer who got the repair was measured again afterwards
(by the lab's event order, not by clocks)."""

from __future__ import annotations

from datetime import datetime

from relay_graph.runtime.times import from_ms, ms_of
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.memory.models import aware, utcnow
from relay_graph.desk.network.store import customer_identity
from relay_graph.lab.queries import lab as q
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.lab import truth
from relay_graph.lab.line import context
from relay_graph.lab.models import Action, DiagnosisRecord, FaultKind, Scoreboard, ScoreRow

HEALTHY = "healthy"


async def record_diagnosis(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    customer: str,
    kind: FaultKind | str | None,
    *,
    at: datetime | None = None,
) -> DiagnosisRecord:
    """Record on the ticket (tenant graph: Ticket.diagnosis, diagnosed_at_ms) what the agent
    concluded: a fault kind, or None for "the readings look healthy". The ticket must be this
    customer's. The lab grades it against the faults striking the customer now."""
    validate_tenant(tenant)
    if not isinstance(ticket_id, str) or not ticket_id or len(ticket_id) > 128:
        raise InvalidInput("ticket id must be a non-empty string of at most 128 characters")
    if kind is None:
        diagnosis = HEALTHY
    else:
        try:
            diagnosis = FaultKind(kind).value
        except ValueError:
            raise InvalidInput(f"unknown fault kind {kind!r}", code="unknown_fault_kind") from None
    _, _, uid = customer_identity(customer)
    at_ms = ms_of(aware(at) or utcnow())
    rows = await client.run(tenant, q.RECORD_DIAGNOSIS, {"id": ticket_id, "uid": uid, "kind": diagnosis,
                                                         "at_ms": at_ms})
    if not rows:
        raise NotFound(f"no ticket {ticket_id!r} for customer {customer!r}", code="ticket_not_found")
    ctx = await context(client, tenant, customer)
    linked = await truth.link_diagnosis(client, tenant, ticket_id=ticket_id, uid=uid, kind=diagnosis,
                                        fault_ids=[f["fault_id"] for f in ctx.faults], at_ms=at_ms)
    return DiagnosisRecord(ticket_id=ticket_id, customer=rows[0]["customer"] or ctx.name, diagnosis=diagnosis,
                           faults_linked=linked)


async def scoreboard(client: GraphClient, tenant: str) -> Scoreboard:
    """Every fault injected into the tenant, oldest first, graded."""
    validate_tenant(tenant)
    rows = await truth.scoreboard_rows(client, tenant)
    ids = sorted({t for r in rows for t in r["tickets"] if t})
    current = {}
    if ids:
        current = {r["ticket_id"]: r["diagnosis"] for r in await client.run(tenant, q.TICKET_DIAGNOSES, {"ids": ids})}
    out: list[ScoreRow] = []
    for r in rows:
        f = r["f"]
        kind = FaultKind(f["kind"])
        tickets = sorted(t for t in r["tickets"] if t)
        diagnoses = [current.get(t) for t in tickets]
        fixed = f.get("status") == "fixed"
        started, fixed_at = from_ms(f["started_at_ms"]), from_ms(f.get("fixed_at_ms"))
        out.append(ScoreRow(
            fault_id=f["fault_id"], kind=kind, customer=f.get("customer"), target=f.get("target"),
            started_at=started, tickets=tickets, diagnoses=diagnoses,
            diagnosed_right=bool(tickets) and all(d == kind.value for d in diagnoses),
            fixed=fixed, fixed_at=fixed_at, fixed_by=Action(f["fixed_by"]) if f.get("fixed_by") else None,
            fixed_proven=fixed and bool(r["proven"]),
            minutes_to_fix=None if fixed_at is None else round((fixed_at - started).total_seconds() / 60, 3),
            actions=int(r["actions"] or 0), wrong_actions=int(r["wrong"] or 0),
        ))
    return Scoreboard(faults=len(out), diagnosed_right=sum(x.diagnosed_right for x in out),
                      fixed=sum(x.fixed for x in out), fixed_proven=sum(x.fixed_proven for x in out), rows=out)
