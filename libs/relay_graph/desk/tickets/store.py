"""The desk's shared state: tickets, handoffs, claims, the timeline, fixes and procedures.

The desk agents never call each other; they coordinate only through these operations. Each
mutation is one Cypher statement (FalkorDB serialises writes per graph, so each is atomic) and each
is idempotent, because stream delivery is at least once:

- open_ticket with a ticket_id opens it once; again it returns the ticket with changed=False.
- hand_off identical to the ticket's latest handoff (same giver, same receiving role) writes nothing.
- set_stage to the stage the ticket is in writes nothing; with expected_version a ticket whose version
  moved on (a stale notification) is left alone; a closed ticket moves only to `reopened`.
- confirm to the stage the ticket is already in writes nothing.
- record_fix counts a procedure's outcome once per ticket and round (a round ends when the ticket
  is reopened).

Ownership rule. The owner of a ticket is an agent *role* ("resolver"); the replica that holds it is
recorded beside it. claim(agent=role, replica=r) is a compare-and-set: it takes a ticket nobody
owns; the replica that already holds it gets True again (a redelivered message) and its hold is
refreshed; any other replica gets False. A replica of the owning role continues a ticket whose
holder died in one of two ways: `take_over=<dead replica>` when it knows whose pending message it
reclaimed (XPENDING names the consumer), or `lease_ms=<idle>`: a holder not seen for that long is
presumed dead ("seen" = its claims, and the stage changes and notes written as that role).
Recommended for handlers of the streams runtime: `replica=delivery.consumer`,
`lease_ms=<the group's min_idle_ms>`; a ticket's state lives in the graph, not in the replica, so
continuing it elsewhere is safe, and a handler that works longer than that without writing to the
ticket claims again to refresh its hold. Another role never takes a ticket over: ownership passes
between roles only by hand_off (which releases the giver's hold); release and a reopen clear it; a
closed ticket keeps its last owner for the record.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from datetime import datetime
from typing import TYPE_CHECKING, Any

from relay_graph.runtime.times import from_ms, ms_of
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.runtime.errors import AlreadyExists, InvalidInput, NotFound
from relay_graph.memory.models import AGENT_PATTERN, utcnow
from relay_graph.desk.queries import tickets as q
from relay_graph.memory.inputs import check_identifier, check_text, check_time
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.desk.tickets.models import (
    Escalation,
    FixResult,
    Handoff,
    Procedure,
    TechVisit,
    Ticket,
    TicketDetail,
    TicketStage,
    TicketSummary,
    TimelineEntry,
)

if TYPE_CHECKING:
    from relay_graph.desk.tickets.work import Work

_AGENT = re.compile(AGENT_PATTERN)
# the streams runtime's consumer names (libs/relay_graph/runtime/streams, heartbeat.py) fit this
_REPLICA = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,254}$")
_EVENT = re.compile(r"^[a-z][a-z0-9_]{0,47}$")
MAX_SUMMARY = 2000
MAX_STEPS = 30
MAX_LIST = 1000


# ---------------------------------------------------------------- input checks and conversions


def _ms(at: datetime | None) -> int:
    return ms_of(check_time(at, "at") if at is not None else utcnow())


def _pattern(value: object, rx: re.Pattern, what: str) -> str:
    if not isinstance(value, str) or not rx.fullmatch(value):
        raise InvalidInput(f"{what} must match {rx.pattern}")
    return value


def _agent(value: object, what: str = "agent") -> str:
    return _pattern(value, _AGENT, what)


def _ticket_id(value: object) -> str:
    return check_identifier(value, "ticket_id")


def _text(value: object, what: str, limit: int = MAX_SUMMARY, *, optional: bool = False) -> str | None:
    """Free text (summaries, details): inputs.check_text, spacing collapsed."""
    if value is None and optional:
        return None
    if optional and isinstance(value, str) and not value.strip():
        return None
    return " ".join(check_text(value, what, limit).split())


def _session(value: object) -> str:
    """Session ids are identifiers, kept exactly as the episodes module got them."""
    return check_identifier(value, "session")


def issue_key(issue_kind: object) -> str:
    """Issue kinds compare in their normal form: "No Internet" and "no internet" are one kind."""
    return name_key(clean_text(issue_kind, "issue_kind"))


def _steps(steps: object) -> list[str]:
    if not isinstance(steps, (list, tuple)) or not steps:
        raise InvalidInput("steps must be a non-empty list of strings")
    if len(steps) > MAX_STEPS:
        raise InvalidInput(f"a procedure has at most {MAX_STEPS} steps")
    return [clean_text(s, "step") for s in steps]


def procedure_id(issue_kind: str, steps: list[str]) -> str:
    """Same issue kind and same steps (in normal form, in order) -> same procedure."""
    canon = "\x1f".join([issue_key(issue_kind), *(name_key(s) for s in _steps(steps))])
    return "proc-" + hashlib.sha256(canon.encode()).hexdigest()[:20]


def _fix_detail(pid: str, steps: list[str]) -> str:
    text = f"{pid}: " + " > ".join(steps)
    return text if len(text) <= 500 else text[:499] + "…"


def _stage(stage: object) -> TicketStage:
    try:
        return TicketStage(stage)
    except ValueError:
        raise InvalidInput(
            f"stage must be one of {', '.join(s.value for s in TicketStage)}"
        ) from None


def _customer(customer: object) -> tuple[str, str, str]:
    name = clean_text(customer, "customer")
    key = name_key(name)
    if not key:
        raise InvalidInput("customer has no letters or digits")
    return name, key, entity_uid("Customer", key)


def _ticket(row: dict[str, Any], cls: type[Ticket] = Ticket, **extra: Any) -> Ticket:
    return cls(
        id=row["id"],
        stage=row["stage"],
        version=row["version"],
        owner=row.get("owner"),
        owner_replica=row.get("owner_replica"),
        customer=row["customer"],
        issue=row["issue"],
        summary=row["summary"],
        session=row.get("session"),
        opened_at=from_ms(row["opened_at_ms"]),
        updated_at=from_ms(row["updated_at_ms"]),
        closed_at=from_ms(row.get("closed_at_ms")),
        round=row.get("round") or 0,
        changed=bool(row.get("changed", False)),
        **extra,
    )


def _one(rows: list[dict[str, Any]], ticket_id: str) -> dict[str, Any]:
    if not rows:
        raise NotFound(f"no ticket {ticket_id!r} in this tenant")
    return rows[0]


def _visit(row: dict[str, Any]) -> TechVisit:
    return TechVisit(
        visit_id=row["visit_id"],
        ticket_id=row["ticket_id"],
        technician=row["technician"],
        at=from_ms(row["at_ms"]),
        scheduled_at=from_ms(row["scheduled_at_ms"]),
        status=row.get("status") or "scheduled",
        changed=bool(row.get("changed", False)),
    )


# ---------------------------------------------------------------- mutations


async def open_ticket(
    client: GraphClient,
    tenant: str,
    *,
    customer: str,
    issue_kind: str,
    summary: str,
    agent: str,
    session: str | None = None,
    ticket_id: str | None = None,
    at: datetime | None = None,
) -> Ticket:
    """Opens a ticket in stage `reported`, version 1, with the timeline event `opened`. With a
    ticket_id it is idempotent; the same id for another customer is refused (AlreadyExists)."""
    validate_tenant(tenant)
    cname, ckey, cuid = _customer(customer)
    issue = issue_key(issue_kind)
    params = {
        "id": _ticket_id(ticket_id) if ticket_id is not None else "T-" + uuid.uuid4().hex[:12].upper(),
        "cuid": cuid,
        "cname": cname,
        "ckey": ckey,
        "issue": issue,
        "iuid": entity_uid("Issue", issue),
        "summary": _text(summary, "summary"),
        "agent": _agent(agent),
        "session": _session(session) if session is not None else None,
        "now": _ms(at),
    }
    row = (await client.run(tenant, q.OPEN_TICKET, params))[0]
    if row["customer_uid"] != cuid:
        raise AlreadyExists(f"ticket {params['id']!r} exists for another customer; choose another ticket_id")
    return _ticket(row)


async def hand_off(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    from_agent: str,
    to_role: str,
    at: datetime | None = None,
    detail: str | None = None,
    customer_words: str | None = None,
) -> Ticket:
    """Records `(from_agent)-[:HANDED_OFF {to_role}]->(ticket)`; the stage stays, the version moves
    on, and if from_agent held the ticket it is released for to_role to claim. A repeat of the
    ticket's latest handoff, or a handoff of a closed ticket, writes nothing (changed=False).
    `detail` and `customer_words`: the timeline entry's words for staff and for the customer."""
    validate_tenant(tenant)
    params = {
        "id": _ticket_id(ticket_id),
        "giver": _agent(from_agent, "from_agent"),
        "to": _agent(to_role, "to_role"),
        "detail": _text(detail, "detail", optional=True) or f"handed to {to_role}",
        "customer": _text(customer_words, "customer_words", optional=True),
        "now": _ms(at),
    }
    return _ticket(_one(await client.run(tenant, q.HAND_OFF, params), ticket_id))


async def claim(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    agent: str,
    replica: str,
    at: datetime | None = None,
    take_over: str | None = None,
    lease_ms: int | None = None,
    detail: str | None = None,
    customer_words: str | None = None,
) -> bool:
    """Atomically picks the ticket up for `agent` (a role) on `replica`. Of any number of racing
    replicas exactly one gets True; the winner claiming again gets True (nothing written), the others
    False. See the module doc for `take_over` and `lease_ms`. A closed ticket cannot be claimed.
    `detail` and `customer_words`: the `picked_up` entry's words (default: the replica, none)."""
    validate_tenant(tenant)
    if lease_ms is not None and (not isinstance(lease_ms, int) or lease_ms <= 0):
        raise InvalidInput("lease_ms must be a positive integer")
    params = {
        "id": _ticket_id(ticket_id),
        "agent": _agent(agent),
        "replica": _pattern(replica, _REPLICA, "replica"),
        "detail": _text(detail, "detail", optional=True) or replica,
        "customer": _text(customer_words, "customer_words", optional=True),
        "take_over": _pattern(take_over, _REPLICA, "take_over") if take_over is not None else None,
        "lease_ms": lease_ms,
        "now": _ms(at),
    }
    return bool(_one(await client.run(tenant, q.CLAIM, params), ticket_id)["won"])


async def release(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    agent: str,
    replica: str | None = None,
    detail: str | None = None,
    at: datetime | None = None,
) -> bool:
    """Lets go of a ticket `agent` holds (only on `replica`, when given) so that any replica can
    claim it. True if it was released by this call."""
    validate_tenant(tenant)
    params = {
        "id": _ticket_id(ticket_id),
        "agent": _agent(agent),
        "replica": _pattern(replica, _REPLICA, "replica") if replica is not None else None,
        "detail": _text(detail, "detail", optional=True),
        "now": _ms(at),
    }
    return bool(_one(await client.run(tenant, q.RELEASE, params), ticket_id)["released"])


async def set_stage(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    stage: TicketStage | str,
    agent: str,
    detail: str | None = None,
    expected_version: int | None = None,
    at: datetime | None = None,
    steps: "list[tuple[str, str | None, str | None]] | None" = None,
    work: "Work | None" = None,
) -> Ticket:
    """Moves the ticket to `stage` (version + 1) with its timeline entries: `steps` (event, staff
    words, customer words: the workflow's, usecases/tickets.py), by default one entry named after
    the stage with `detail`; and the working state `work` when given, all in one statement. Writes
    nothing and returns the current ticket (changed=False) when expected_version is given and the
    version moved on, when the ticket is already in that stage, or when it is closed and the stage
    is not `reopened`. `closed` stamps closed_at; `reopened` clears the owner and starts a round."""
    return await write_steps(client, tenant, ticket_id, agent=agent, stage=_stage(stage), work=work,
                             steps=steps if steps is not None else [(_stage(stage).value, detail, None)],
                             expected_version=expected_version, at=at)


async def add_event(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    agent: str,
    event: str,
    detail: str | None = None,
    at: datetime | None = None,
) -> int:
    """Appends a note to the timeline (the version does not move). Returns its sequence number."""
    validate_tenant(tenant)
    params = {
        "id": _ticket_id(ticket_id),
        "agent": _agent(agent),
        "event": _pattern(event, _EVENT, "event"),
        "detail": _text(detail, "detail", optional=True),
        "now": _ms(at),
    }
    return int(_one(await client.run(tenant, q.ADD_EVENT, params), ticket_id)["seq"])


async def confirm(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    fixed: bool,
    by: str,
    detail: str | None = None,
    at: datetime | None = None,
) -> Ticket:
    """The customer's (or staff's) word. fixed -> `closed`. Not fixed -> `reopened`: each procedure
    credited with this round's fix (FIXED_BY) counts a failure, the owner is cleared so the ticket
    can be claimed again. Confirming into the stage the ticket is already in writes nothing."""
    validate_tenant(tenant)
    if not isinstance(fixed, bool):
        raise InvalidInput("fixed must be true or false")
    params = {
        "id": _ticket_id(ticket_id),
        "fixed": fixed,
        "target": (TicketStage.CLOSED if fixed else TicketStage.REOPENED).value,
        "event": "confirmed_fixed" if fixed else "confirmed_not_fixed",
        "by": _agent(by, "by"),
        "detail": _text(detail, "detail", optional=True),
        "now": _ms(at),
    }
    return _ticket(_one(await client.run(tenant, q.CONFIRM, params), ticket_id))


async def record_fix(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    issue_kind: str,
    steps: list[str],
    verified: bool,
    agent: str,
    at: datetime | None = None,
    note: bool = True,
) -> FixResult:
    """Records a fix attempt. The procedure for (issue_kind, steps) is created the first time, with
    its FIRST/NEXT step chain, and shared after that. Verified: successes + 1 and
    `(ticket)-[:FIXED_BY]->(procedure)`; not verified: failures + 1. Both leave
    `(ticket)-[:TRIED_FIX {outcome}]->(procedure)`. Counted once per ticket and round. `note=False`:
    no timeline entry (the workflow's use case writes the step, usecases/tickets.py)."""
    validate_tenant(tenant)
    if not isinstance(verified, bool):
        raise InvalidInput("verified must be true or false")
    issue = issue_key(issue_kind)
    clean = _steps(steps)
    pid = procedure_id(issue, clean)
    params = {
        "id": _ticket_id(ticket_id),
        "pid": pid,
        "issue": issue,
        "steps": clean,
        "verified": verified,
        "event": ("fix_verified" if verified else "fix_failed") if note else None,
        "fix_detail": _fix_detail(pid, clean),
        "agent": _agent(agent),
        "now": _ms(at),
    }
    row = _one(await client.run(tenant, q.RECORD_FIX, params), ticket_id)
    return FixResult(
        procedure_id=row["procedure_id"],
        issue_kind=row["issue_kind"],
        steps=row["steps"],
        outcome="verified" if verified else "failed",
        counted=bool(row["counted"]),
        successes=row["successes"],
        failures=row["failures"],
    )


async def schedule_visit(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    technician: str,
    at: datetime,
    agent: str = "resolver",
    booked_at: datetime | None = None,
    note: bool = True,
) -> TechVisit:
    """Books `(technician)-[:VISITS]->(visit)-[:FOR_TICKET]->(ticket)`. The same technician at the
    same time for the same ticket is one visit (idempotent). The stage is not changed here.
    `note=False`: no timeline entry (the workflow's VisitBooked step is written by the use case)."""
    validate_tenant(tenant)
    if not isinstance(at, datetime):
        raise InvalidInput("at must be a datetime")
    tid = _ticket_id(ticket_id)
    tech = clean_text(technician, "technician")
    params = {
        "id": tid,
        "tech": tech,
        "vid": visit_id(tid, tech, at),
        "at": _ms(at),
        "agent": _agent(agent),
        "note": bool(note),
        "now": _ms(booked_at),
    }
    return _visit(_one(await client.run(tenant, q.SCHEDULE_VISIT, params), ticket_id))


def visit_id(ticket_id: str, technician: str, at: datetime) -> str:
    """The id of a visit (the same technician at the same time for the same ticket is one visit)."""
    tech = clean_text(technician, "technician")
    return "visit-" + hashlib.sha256(
        f"{_ticket_id(ticket_id)}\x1f{name_key(tech)}\x1f{_ms(at)}".encode()).hexdigest()[:20]


async def settle_visit(client: GraphClient, tenant: str, ticket_id: str, visit_id: str, *, done: bool, agent: str,
                       at: datetime | None = None) -> TechVisit:
    """A booked visit marked done (the technician came: the lab's outcome, or their report) or
    cancelled. Only a `scheduled` visit moves; a repeat writes nothing (changed=False)."""
    validate_tenant(tenant)
    params = {"id": _ticket_id(ticket_id), "vid": check_identifier(visit_id, "visit_id"),
              "status": "done" if done else "cancelled", "agent": _agent(agent), "at": _ms(at)}
    rows = await client.run(tenant, q.SET_VISIT_STATUS, params)
    if not rows:
        raise NotFound(f"no visit {visit_id!r} for ticket {ticket_id!r}")
    return _visit(rows[0])


async def write_steps(
    client: GraphClient,
    tenant: str,
    ticket_id: str,
    *,
    agent: str,
    steps: "list[tuple[str, str | None, str | None]]",
    stage: TicketStage | str | None = None,
    expected_version: int | None = None,
    work: "Work | None" = None,
    at: datetime | None = None,
) -> Ticket:
    """The workflow's steps (event, staff words, customer words), in order, with the stage move and
    the working state, in one statement. Writes nothing (changed=False) when expected_version is
    given and the version moved on, when `stage` is the ticket's stage already, or when the ticket
    is closed and `stage` is not `reopened`. The workflow's use cases call it (usecases/tickets.py)
    with the steps `workflow.advance` returned; a stage move goes through set_stage."""
    validate_tenant(tenant)
    if expected_version is not None and (not isinstance(expected_version, int) or isinstance(expected_version, bool)):
        raise InvalidInput("expected_version must be an integer")
    params = {
        "id": _ticket_id(ticket_id),
        "agent": _agent(agent),
        "events": [_pattern(e, _EVENT, "event") for e, _, _ in steps],
        "staff": [_text(s, "staff words", optional=True) for _, s, _ in steps],
        "customer": [_text(c, "customer words", optional=True) for _, _, c in steps],
        "stage": _stage(stage).value if stage is not None else None,
        "expected": expected_version,
        "work": work.model_dump_json() if work is not None else None,
        "now": _ms(at),
    }
    return _ticket(_one(await client.run(tenant, q.WRITE_STEPS, params), ticket_id))


# ---------------------------------------------------------------- reads


async def peek_ticket(client: GraphClient, tenant: str, ticket_id: str) -> Ticket:
    """The ticket without its timeline: what a handler reads to check a notification's version."""
    validate_tenant(tenant)
    return _ticket(_one(await client.run(tenant, q.PEEK_TICKET, {"id": _ticket_id(ticket_id)}), ticket_id))


async def get_ticket(client: GraphClient, tenant: str, ticket_id: str) -> TicketDetail:
    """GET /tickets/{id}: the ticket, its timeline in order, its handoffs in order, its visits."""
    validate_tenant(tenant)
    row = _one(await client.run(tenant, q.GET_TICKET, {"id": _ticket_id(ticket_id)}), ticket_id)
    # OPTIONAL MATCH + collect leaves one all-null map when there is nothing; seq orders for sure.
    events = sorted((e for e in row["events"] if e.get("seq") is not None), key=lambda e: e["seq"])
    handoffs = sorted((h for h in row["handoffs"] if h.get("seq") is not None), key=lambda h: h["seq"])
    visits = sorted((v for v in row["visits"] if v.get("visit_id")), key=lambda v: (v["at_ms"], v["visit_id"]))
    return _ticket(
        row,
        TicketDetail,
        timeline=[TimelineEntry(at=from_ms(e["at_ms"]), agent=e["agent"], event=e["event"], detail=e.get("detail"),
                                customer=e.get("customer")) for e in events],
        handoffs=[Handoff(**{"from": h["giver"], "to": h["to"], "at": from_ms(h["at_ms"])}) for h in handoffs],
        visits=[_visit(v) for v in visits],
        fixed_by=sorted(row["fixed_by"]),
    )


def _summary(row: dict[str, Any]) -> TicketSummary:
    return TicketSummary(
        id=row["id"],
        stage=row["stage"],
        version=row["version"],
        owner=row.get("owner"),
        customer=row["customer"],
        issue=row["issue"],
        opened_at=from_ms(row["opened_at_ms"]),
        updated_at=from_ms(row["updated_at_ms"]),
    )


async def list_tickets(
    client: GraphClient,
    tenant: str,
    customer: str | None = None,
    *,
    open_only: bool = False,
    limit: int = 200,
) -> list[TicketSummary]:
    """Tickets, newest first; with `customer` only theirs (by exact normal-form name)."""
    validate_tenant(tenant)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIST:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIST}")
    params: dict[str, Any] = {"open_only": bool(open_only), "limit": limit}
    if customer is None:
        rows = await client.run(tenant, q.LIST_TICKETS, params)
    else:
        params["cuid"] = _customer(customer)[2]
        rows = await client.run(tenant, q.LIST_TICKETS_FOR_CUSTOMER, params)
    return [_summary(r) for r in rows]


async def open_tickets_for(client: GraphClient, tenant: str, customer: str, *, limit: int = 200) -> list[TicketSummary]:
    """The customer's tickets that are not closed, newest first."""
    return await list_tickets(client, tenant, customer, open_only=True, limit=limit)


async def best_procedures(client: GraphClient, tenant: str, issue_kind: str, limit: int = 3) -> list[Procedure]:
    """Procedures that fixed this kind of issue at least once, best first by (s+1)/(s+f+2)."""
    validate_tenant(tenant)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 100:
        raise InvalidInput("limit must be between 1 and 100")
    rows = await client.run(tenant, q.BEST_PROCEDURES, {"issue": issue_key(issue_kind), "limit": limit})
    return [Procedure(**r) for r in rows]


async def get_procedure(client: GraphClient, tenant: str, procedure_id: str) -> Procedure:
    """One procedure with its steps read along its FIRST/NEXT chain."""
    validate_tenant(tenant)
    pid = check_identifier(procedure_id, "procedure_id")
    rows = await client.run(tenant, q.PROCEDURE, {"pid": pid})
    if not rows:
        raise NotFound(f"no procedure {procedure_id!r} in this tenant")
    return Procedure(**rows[0])


# ---------------------------------------------------------------- working state, escalations, the invariant


async def get_work(client: GraphClient, tenant: str, ticket_id: str) -> "Work":
    """The ticket's working state (relay_graph.desk.tickets.work.Work); an empty one for the ticket's
    round when nothing was recorded yet."""
    from relay_graph.desk.tickets.work import Work, for_round

    validate_tenant(tenant)
    tid = _ticket_id(ticket_id)
    rows = await client.run(tenant, q.TICKET_WORK, {"id": tid})
    row = _one(rows, ticket_id)
    if row.get("work"):
        return Work.model_validate_json(row["work"])
    t = await peek_ticket(client, tenant, tid)
    return for_round(None, t.round)


async def set_work(client: GraphClient, tenant: str, ticket_id: str, work: "Work") -> None:
    """Writes the working state whole (only the ticket's holder writes it)."""
    validate_tenant(tenant)
    _one(await client.run(tenant, q.SET_TICKET_WORK, {"id": _ticket_id(ticket_id), "work": work.model_dump_json()}),
         ticket_id)


async def escalate(client: GraphClient, tenant: str, ticket_id: str, *, reason: str, to: str, agent: str,
                   priority: str = "high", at: datetime | None = None) -> Escalation:
    """An Escalation node for the ticket's round (idempotent: a repeat returns the first one) and
    the ticket's priority raised."""
    validate_tenant(tenant)
    tid = _ticket_id(ticket_id)
    t = await peek_ticket(client, tenant, tid)
    params = {"id": tid, "eid": f"{tid}-esc-r{t.round}", "reason": _text(reason, "reason"),
              "to": _agent(to), "agent": _agent(agent), "priority": priority, "now": _ms(at)}
    return escalation_of(_one(await client.run(tenant, q.ESCALATE, params), ticket_id))


async def visits_of(client: GraphClient, tenant: str, ticket_id: str) -> list[TechVisit]:
    """The ticket's visits, earliest first (without its timeline)."""
    validate_tenant(tenant)
    return [_visit(r) for r in await client.run(tenant, q.TICKET_VISITS, {"id": _ticket_id(ticket_id)})]


async def round_escalation(client: GraphClient, tenant: str, ticket_id: str, round_: int) -> Escalation | None:
    """The ticket's escalation in `round_`, if there is one (escalate writes one per round)."""
    validate_tenant(tenant)
    tid = _ticket_id(ticket_id)
    rows = await client.run(tenant, q.ESCALATION, {"id": tid, "eid": f"{tid}-esc-r{int(round_)}"})
    return escalation_of(rows[0]) if rows else None


def escalation_of(row: dict[str, Any]) -> Escalation:
    """A row of queries.tickets.ESCALATE's fields as an Escalation."""
    return Escalation(escalation_id=row["escalation_id"], ticket_id=row["ticket_id"], round=row["round"],
                      reason=row["reason"], to=row["to"], agent=row["agent"], at=from_ms(row["at_ms"]),
                      priority=row["priority"])


async def unproven_fixes(client: GraphClient, tenant: str) -> dict[str, list[str]]:
    """The desk's invariant over a tenant's graph: every move of a ticket to `fixed` must rest on a
    passing check taken after the last action of its round (ticket_work.unproven). Returns the
    tickets that break it, with why; {} when it holds."""
    from relay_graph.desk.tickets.work import Work, unproven

    validate_tenant(tenant)
    broken: dict[str, list[str]] = {}
    for row in await client.run(tenant, q.FIXED_TICKETS):
        starts = sorted(s for s in row["round_seqs"] if s is not None)
        rounds = [sum(1 for s in starts if s < f) for f in sorted(row["fixed_seqs"])]
        work = Work.model_validate_json(row["work"]) if row.get("work") else None
        problems = unproven(rounds, work)
        if problems:
            broken[row["id"]] = problems
    return broken
