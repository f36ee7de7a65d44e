"""Moving a customer's case to another regional desk, with its whole history.

A regional desk is a tenant whose graph was seeded for one region (its `CatalogueSeed {region}`
marker, written by catalogue.ensure_catalogue / world.seed_world). When a customer's address is
placed in another desk's territory (`needs_move`, from catalogue.route_region), their case moves:

    if (target := needs_move(placement, "india")) is not None:
        moved = await move_case(client, "acme-india", "acme-europe", "Asha Verma", by="intake")

What is copied into the target graph, node for node, under the source's own ids:
- facts with both clocks exactly (valid_from/valid_to, recorded_at/expired_at, believed_from),
  their state label, asserted_by, corroborations, SUPERSEDES chain, slot (with its version and
  open conflict), conflicts (BETWEEN / SETTLED_FOR), the typed mirror and WAS edges, the entities;
- sessions (FOLLOWED_BY chain) and their episodes with text, time, speaker, kind, place in the
  session (`pos`), writer, MENTIONS, DERIVED/RETIRED links, the speaker links (SPOKEN_BY / NAMES to
  Speaker nodes), and the stored vector (nothing is re-embedded);
- tickets with stage, version, timeline events, handoffs, pick-ups, technician visits. An open
  ticket arrives with no owner, so the target desk's agents can claim it. Procedures (FIXED_BY,
  TRIED_FIX) are each desk's own procedural memory and are not carried over.

The source keeps everything (nothing is deleted): it gains `(:Customer)-[:CASE_MOVED]->(:CaseMove
{to_region, at_ms, by})` and each open ticket a `moved_desk` timeline event ("moved to Europe
desk"; usecases.customers.move_case gives the ticket workflow's words, "moved to the Europe desk").
The target gains `CASE_ARRIVED`.

Idempotent: everything is MERGEd on the source ids and only what the target lacks is sent, so a
second move creates nothing (counts in the result are what this call copied). Refused, before
anything is written, with a typed error: an invalid tenant id, the same tenant twice, a tenant that
is not a regional desk (`not_a_regional_desk`), an unknown customer (`unknown_customer`), a target
that holds its own, different facts of this customer (`case_diverged`: the target desk has learnt
things since, copying would give two current values), a ticket id the target uses for someone else.
Each write is one statement; a failure between statements leaves a partial copy that the next
move completes (everything is MERGEd).
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from relay_graph.runtime.times import ms_of
from relay_graph.desk.catalogue import route_region, seeded_regions
from relay_graph.desk.catalogue.models import Placement
from relay_graph.desk.catalogue.regions import region_spec
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.runtime.errors import InvalidInput, NotFound, StateConflict
from relay_graph.memory.entity_refs import find_entity
from relay_graph.memory.models import AGENT_PATTERN, aware, utcnow
from relay_graph.desk.queries import case_move as q
from relay_graph.runtime.tenancy import validate_tenant

_AGENT = re.compile(AGENT_PATTERN)
# Who holds an open ticket is the source desk's business: the target desk's agents claim it afresh.
_OWNER_FIELDS = ("owner", "owner_replica", "owner_seen_ms", "owner_since_ms")


class CaseMove(BaseModel):
    customer: str
    from_region: str
    to_region: str
    move_id: str
    at: datetime  # when the case first moved (a repeat reports the first move's time)
    facts: int  # facts copied by this call (0 on a repeat)
    episodes: int
    tickets: int
    tickets_marked: int  # open tickets in the source that got the "moved to ... desk" event now

    @property
    def copied(self) -> int:
        return self.facts + self.episodes + self.tickets


def needs_move(placement: Placement, current_region: str) -> str | None:
    """The region whose desk should handle a customer placed at `placement`, when it is not the
    desk they are talking to (`current_region`); None when they stay (same region, or a place
    that is ambiguous or unknown)."""
    current = region_spec(current_region).code
    target = route_region(placement, current=current)
    return target if target is not None and target != current else None


def move_id_for(from_tenant: str, to_tenant: str, customer_uid: str) -> str:
    raw = "\x1f".join((from_tenant, to_tenant, customer_uid))
    return "mv_" + hashlib.blake2b(raw.encode(), digest_size=12).hexdigest()


async def desk_region(client: GraphClient, tenant: str) -> str:
    """The region a regional desk was seeded for; InvalidInput `not_a_regional_desk` when the
    tenant has no seeded region or several."""
    regions = sorted(await seeded_regions(client, tenant))
    if len(regions) != 1:
        what = "no region" if not regions else f"several regions ({', '.join(regions)})"
        raise InvalidInput(f"tenant {tenant!r} is not a regional desk: it is seeded for {what}; "
                           "seed it for one region first (POST /v1/tenants/{t}/world)", code="not_a_regional_desk")
    return regions[0]


def _fact_snapshot(row: dict[str, Any]) -> tuple:
    return row["state"], tuple(sorted((k, repr(v)) for k, v in (row["props"] or {}).items()))


class _Case:
    """Everything of one customer's case in one graph, as read by the queries."""

    def __init__(self) -> None:
        self.facts: list[dict] = []
        self.slots: list[dict] = []
        self.conflicts: list[dict] = []
        self.mirrors: list[dict] = []
        self.sessions: list[dict] = []
        self.episodes: list[dict] = []
        self.tickets: list[dict] = []


async def _read_case(client: GraphClient, tenant: str, uid: str) -> _Case:
    case = _Case()
    case.facts = await client.run(tenant, q.FACTS, {"uid": uid})
    keys = sorted({f["props"]["slot"] for f in case.facts if f["props"].get("slot")})
    case.slots = [r["props"] for r in await client.run(tenant, q.SLOTS, {"keys": keys})] if keys else []
    case.conflicts = await client.run(tenant, q.CONFLICTS, {"uid": uid})
    case.mirrors = await client.run(tenant, q.MIRRORS, {"uid": uid})
    case.sessions = await client.run(tenant, q.SESSIONS, {"uid": uid})
    case.episodes = await client.run(tenant, q.EPISODES, {"uid": uid})
    case.tickets = await client.run(tenant, q.TICKETS, {"uid": uid})
    return case


async def _customer_uid(client: GraphClient, tenant: str, customer: object) -> tuple[str, str]:
    ref = await find_entity(client, tenant, customer, "Customer")  # type: ignore[arg-type]
    if ref is None:
        raise NotFound(f"no customer called {customer!r} at this desk", code="unknown_customer")
    return ref.uid, ref.name


def _check_target(source: _Case, target: _Case, existing_tickets: list, uid: str) -> None:
    """Refuse (before writing) when the target's copy of the case is not a subset of the source."""
    mine = {f["props"]["fact_id"]: _fact_snapshot(f) for f in source.facts}
    for f in target.facts:
        fid = f["props"].get("fact_id")
        if fid not in mine or mine[fid] != _fact_snapshot(f):
            raise StateConflict(
                "the target desk already holds facts about this customer that differ from this desk's "
                "(one of the desks learnt things since the last move); nothing was copied",
                code="case_diverged")
    for tid, cuid in existing_tickets:
        if cuid != uid:
            raise StateConflict(f"the target desk uses ticket id {tid!r} for another customer",
                                code="ticket_id_taken")


def _entity_rows(source: _Case, customer_props: dict) -> dict[str, list[dict]]:
    """Entities the copy needs, grouped by their label (a code constant; anything else is left out)."""
    found: dict[str, dict] = {customer_props["uid"]: customer_props}
    for f in source.facts:
        if f["object"] and f["object"].get("uid"):
            found.setdefault(f["object"]["uid"], f["object"])
    for t in source.tickets:
        if t["issue"] and t["issue"].get("uid"):
            found.setdefault(t["issue"]["uid"], t["issue"])
    by_type: dict[str, list[dict]] = {}
    for uid, props in found.items():
        etype = props.get("type")
        if etype in q.ENTITIES:
            by_type.setdefault(etype, []).append({"uid": uid, "props": props})
    return by_type


def _episode_rows(episodes: list[dict]) -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    rows, mentions, derived, retired = [], [], [], []
    for e in episodes:
        props = dict(e["props"])
        # no vector yet (its writer deferred it, episodes.embed_missing): it moves without one, as it is
        vec = props.pop("embedding", None)
        eid = props["episode_id"]
        rows.append({"id": eid, "session": e["session"], "kind": e["kind"], "props": props,
                     "vec": None if vec is None else [float(x) for x in vec], "in_props": e["in_props"] or {},
                     "writers": sorted(set(e["writers"]))})
        mentions += [{"ep": eid, "uid": u} for u in sorted(set(e["mentions"]))]
        derived += [{"ep": eid, "fact": f} for f in sorted(set(e["derived"]))]
        retired += [{"ep": eid, "fact": f} for f in sorted(set(e["retired"]))]
    return rows, mentions, derived, retired


def _speaker_rows(episodes: list[dict]) -> dict[str, list[dict]]:
    """The Speaker nodes and the SPOKEN_BY / NAMES links of `episodes`, one row per link. Given all
    the case's episodes (not only the new ones): MERGE makes a link the target lacks, so a case moved
    before speakers were carried gets them on its next move, and a repeat creates nothing."""
    speakers: dict[str, str] = {}
    spoken, names = set(), set()
    for e in episodes:
        eid = e["props"]["episode_id"]
        for field, links in (("spoken_by", spoken), ("names", names)):
            for item in e.get(field) or []:
                if item and item[0] is not None:
                    speakers.setdefault(item[0], item[1])
                    links.add((eid, item[0]))
    return {"speakers": [{"key": k, "name": n} for k, n in sorted(speakers.items())],
            "spoken": [{"ep": ep, "key": k} for ep, k in sorted(spoken)],
            "names": [{"ep": ep, "key": k} for ep, k in sorted(names)]}


_TICKET_LINKS = ("issues", "opened_in", "events", "opened", "handoffs", "pickups", "visits")


def _ticket_rows(tickets: list[dict]) -> dict[str, list[dict]]:
    """WRITE_TICKETS' parameters: the tickets, and each kind of link as its own flat list whose rows
    carry their ticket's id (the statement writes them phase by phase, not per ticket)."""
    out: dict[str, list[dict]] = {"tickets": [], **{k: [] for k in _TICKET_LINKS}}
    for t in tickets:
        props = dict(t["props"])
        if props.get("stage") != "closed":  # the target desk's agents claim it afresh
            for k in _OWNER_FIELDS:
                props.pop(k, None)
        tid = props["ticket_id"]
        out["tickets"].append({"id": tid, "props": props, "has": t["has"] or {}})
        if t["issue"] and t["issue"].get("uid"):
            out["issues"].append({"ticket": tid, "uid": t["issue"]["uid"]})
        if t["opened_in"]:
            out["opened_in"].append({"ticket": tid, "session": t["opened_in"]})
        out["events"] += [{"ticket": tid, "props": e} for e in t["events"] if e and e.get("seq") is not None]
        for item in t["by_agents"]:
            if not item:
                continue
            kind, agent, rprops = item
            rprops = rprops or {}
            if kind == "OPENED":
                out["opened"].append({"ticket": tid, "agent": agent, "props": rprops})
            elif kind == "HANDED_OFF":
                out["handoffs"].append({"ticket": tid, "agent": agent, "key": rprops.get("seq"), "props": rprops})
            elif kind == "PICKED_UP":
                out["pickups"].append({"ticket": tid, "agent": agent, "key": rprops.get("at_ms"), "props": rprops})
        out["visits"] += [{"ticket": tid, "tech": v[0], "props": v[1]}
                          for v in t["visits"] if v and v[1] and v[1].get("visit_id")]
    return out


async def _copy_facts(client: GraphClient, to_tenant: str, uid: str, source: _Case, new_facts: list[dict]) -> None:
    """The facts the target lacks, with their slots, SUPERSEDES chain, typed mirrors and conflicts."""
    new_ids = {f["props"]["fact_id"] for f in new_facts}
    await client.run(to_tenant, q.WRITE_SLOTS, {"rows": [{"key": s["key"], "props": s} for s in source.slots]})
    for state in q.FACT_STATES:
        rows = [{"fact_id": f["props"]["fact_id"], "subject_uid": uid, "object_uid": f["props"]["object_uid"],
                 "agent": f["props"]["asserted_by"], "props": f["props"]}
                for f in new_facts if f["state"] == state]
        if rows:
            await client.run(to_tenant, q.WRITE_FACTS[state], {"rows": rows})
    sup = [{"a": f["props"]["fact_id"], "b": old} for f in new_facts for old in f["supersedes"]]
    if sup:
        await client.run(to_tenant, q.WRITE_SUPERSEDES, {"rows": sup})
    by_type: dict[str, list[dict]] = {}
    for m in source.mirrors:
        if m["type"] in q.WRITE_MIRRORS and m["props"].get("fact_id") in new_ids:
            by_type.setdefault(m["type"], []).append({"fact_id": m["props"]["fact_id"], "o_uid": m["o_uid"],
                                                      "props": m["props"]})
    for etype, rows in by_type.items():
        await client.run(to_tenant, q.WRITE_MIRRORS[etype], {"uid": uid, "rows": rows})
    if source.conflicts:
        await client.run(to_tenant, q.WRITE_CONFLICTS, {
            "rows": [{"conflict_id": c["props"]["conflict_id"], "props": c["props"]} for c in source.conflicts],
            "between": [{"conflict": c["props"]["conflict_id"], "fact": f}
                        for c in source.conflicts for f in sorted(set(c["between"]))],
            "settled_for": [{"conflict": c["props"]["conflict_id"], "fact": f}
                            for c in source.conflicts for f in sorted(set(c["settled_for"]))],
        })


async def move_case(client: GraphClient, from_tenant: str, to_tenant: str, customer: str, *, by: str,
                    at: datetime | None = None, detail: str | None = None) -> CaseMove:
    """Copy `customer`'s whole case from `from_tenant` to `to_tenant` and mark the move in the
    source (see the module doc). `by`: who moved it (an agent name or a person's handle). `detail`:
    the words of each open ticket's `moved_desk` step (the use case takes them from the ticket
    workflow's MovedDesk); default "moved to <desk>"."""
    from_tenant = validate_tenant(from_tenant)
    to_tenant = validate_tenant(to_tenant)
    if from_tenant == to_tenant:
        raise InvalidInput("the case is at that desk already: to_tenant must differ from the source tenant",
                           code="same_desk")
    if not isinstance(by, str) or not _AGENT.fullmatch(by):
        raise InvalidInput(f"by must match {AGENT_PATTERN}")
    if at is not None and not isinstance(at, datetime):
        raise InvalidInput("at must be a datetime")
    now_ms = ms_of(aware(at or utcnow()))
    from_region = await desk_region(client, from_tenant)
    to_region = await desk_region(client, to_tenant)
    uid, name = await _customer_uid(client, from_tenant, customer)
    customer_props = (await client.run(from_tenant, q.CUSTOMER, {"uid": uid}))[0]["props"]

    source = await _read_case(client, from_tenant, uid)
    target = await _read_case(client, to_tenant, uid)
    existing = (await client.run(to_tenant, q.EXISTING, {
        "episodes": [e["props"]["episode_id"] for e in source.episodes],
        "tickets": [t["props"]["ticket_id"] for t in source.tickets],
    }))[0]
    _check_target(source, target, existing["tickets"], uid)

    have_facts = {f["props"]["fact_id"] for f in target.facts}
    have_episodes = set(existing["episodes"])
    have_tickets = {tid for tid, _ in existing["tickets"]}
    new_facts = [f for f in source.facts if f["props"]["fact_id"] not in have_facts]
    new_episodes = [e for e in source.episodes if e["props"]["episode_id"] not in have_episodes]
    episodes, mentions, derived, retired = _episode_rows(new_episodes)  # may refuse: before any write
    new_tickets = [t for t in source.tickets if t["props"]["ticket_id"] not in have_tickets]

    # ---- writes: target first, the source's mark last (a failed copy leaves the source unmarked)
    for etype, rows in _entity_rows(source, customer_props).items():
        await client.run(to_tenant, q.ENTITIES[etype], {"rows": rows})
    if new_facts:
        await _copy_facts(client, to_tenant, uid, source, new_facts)
    if new_episodes or source.sessions:
        follows = [{"a": s["props"]["session_id"], "b": n} for s in source.sessions for n in s["next"]]
        await client.run(to_tenant, q.WRITE_EPISODES, {
            "uid": uid, "sessions": [s["props"] for s in source.sessions], "follows": follows,
            "episodes": episodes, "mentions": mentions, "derived": derived, "retired": retired,
            **_speaker_rows(source.episodes),
        })
    if new_tickets:
        await client.run(to_tenant, q.WRITE_TICKETS, {"uid": uid, **_ticket_rows(new_tickets)})

    marks = {"uid": uid, "move_id": move_id_for(from_tenant, to_tenant, uid), "from_region": from_region,
             "to_region": to_region, "now": now_ms, "by": by}
    await client.run(to_tenant, q.MARK_ARRIVED, marks)
    desk = region_spec(to_region).desk
    row = (await client.run(from_tenant, q.MARK_MOVED, {**marks, "detail": detail or f"moved to {desk}"}))[0]
    return CaseMove(
        customer=name, from_region=from_region, to_region=to_region, move_id=marks["move_id"],
        at=datetime.fromtimestamp(row["at_ms"] / 1000, tz=utcnow().tzinfo), facts=len(new_facts),
        episodes=len(new_episodes), tickets=len(new_tickets), tickets_marked=int(row["marked"] or 0),
    )


async def moves_of(client: GraphClient, tenant: str, customer: str) -> list[dict[str, Any]]:
    """The customer's move marks in this tenant (direction out at the source, in at the target),
    newest first."""
    validate_tenant(tenant)
    uid = entity_uid("Customer", name_key(customer))
    return [r["props"] for r in await client.run(tenant, q.MOVES_OF, {"uid": uid})]


__all__ = ["CaseMove", "desk_region", "move_case", "move_id_for", "moves_of", "needs_move"]
