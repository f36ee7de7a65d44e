"""The console's "find, then focus": search for a customer (by ticket, id, phone or name), the
neighbourhood of one customer as the graph page draws it (their facts on both clocks, sessions,
tickets, the agents who wrote or worked them, their line), and the facts whose two clocks disagree,
each with the sentence that says why.

All reads. A name is found as the desk finds one (desk.customers.store.find): exact, several
listed, or a misspelling offered as "did you mean"; the search never picks among several. Uses
memory, desk and its own named statements (queries/console_focus.py)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Literal

from pydantic import BaseModel, Field

from relay_graph.desk.agent_reads import customer_uid
from relay_graph.desk.customers import store as customers
from relay_graph.memory import entity_refs, names
from relay_graph.memory.entities import is_customer_id
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.usecases import console
from relay_graph.usecases.context import Call
from relay_graph.usecases.queries import console_focus as q

CUSTOMER = "Customer"
MAX_QUERY = 200
MIN_PHONE_DIGITS = 6  # fewer digits than this is not a phone number people search by
FOCUS_EPISODES = 60  # a long-time customer's newest turns; the rest stay in the whole view
LATE_AFTER_MS = 3_600_000  # learnt more than an hour after it became true: a late fact

How = Literal["ticket", "id", "phone", "name", "fuzzy", "none"]


class Found(BaseModel):
    id: str = Field(description="the customer's id (what /customers/{id}/... takes)")
    node: str = Field(description="their node in the console graph (its `id`)")
    name: str = Field(description="their name on file, else their id")
    why: str = Field(description="what matched: `ticket T-…`, `phone …`, `name`, `id`")


class SearchAnswer(BaseModel):
    asked: str
    how: How = Field(description="how it was found; `fuzzy`: a name spelt alike (offered, not chosen)")
    customers: list[Found] = Field(description="one to focus on, or several to choose from; none is guessed")
    did_you_mean: str | None = Field(default=None, description="the names close to a misspelt one")


def _key(uid: str) -> str:
    return uid.split("|", 1)[1] if "|" in uid else uid


async def _found(call: Call, uids: list[str], why: str) -> list[Found]:
    on_file = await names.customer_names(call.client, call.tenant, uids)
    return [Found(id=_key(u), node=u, name=(on_file.get(u) or [_key(u)])[0], why=why) for u in dict.fromkeys(uids)]


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _looks_like_phone(text: str) -> bool:
    digits = _digits(text)
    return len(digits) >= MIN_PHONE_DIGITS and re.fullmatch(r"[+\d\s().-]+", text) is not None


async def search(call: Call, text: str) -> SearchAnswer:
    """See the module doc. InvalidInput for an empty or over-long search."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("search for a name, a customer id, a phone number or a ticket id")
    asked = " ".join(text.split())
    if len(asked) > MAX_QUERY:
        raise InvalidInput(f"a search is at most {MAX_QUERY} characters")
    client, tenant = call.client, call.tenant
    if not await client.graph_exists(tenant):
        return SearchAnswer(asked=asked, how="none", customers=[])
    if re.fullmatch(r"[Tt]-[A-Za-z0-9_-]{1,60}", asked):
        rows = await client.run(tenant, q.TICKET_CUSTOMER, {"id": asked.upper()})
        if rows and rows[0]["uid"]:
            return SearchAnswer(asked=asked, how="ticket", customers=await _found(call, [rows[0]["uid"]], f"ticket {asked.upper()}"))
    if is_customer_id(asked):
        ref = await entity_refs.find_entity(client, tenant, asked, CUSTOMER)
        found = await _found(call, [ref.uid], "id") if ref else []
        return SearchAnswer(asked=asked, how="id" if found else "none", customers=found)
    if _looks_like_phone(asked):
        wanted = _digits(asked)
        uids = [r["uid"] for r in await client.run(tenant, q.PHONE_FACTS)
                if (have := _digits(str(r["phone"] or ""))) and len(have) >= MIN_PHONE_DIGITS
                and (have.endswith(wanted) or wanted.endswith(have))]
        return SearchAnswer(asked=asked, how="phone" if uids else "none",
                            customers=await _found(call, uids, f"phone {asked}"))
    answer = await customers.find(client, tenant, asked)
    if answer.ambiguous is not None:
        cands = answer.ambiguous.candidates
        found = await _found(call, [customer_uid(c.id) for c in cands], "name spelt alike")
        return SearchAnswer(asked=asked, how="fuzzy", customers=found, did_you_mean=answer.ambiguous.message)
    uids = [customer_uid(c.id) for c in answer.customers]
    if answer.matched is not None:  # spelt alike: offered, never chosen for the asker
        found = await _found(call, uids, "name spelt alike")
        return SearchAnswer(asked=asked, how="fuzzy", customers=found,
                            did_you_mean=f"did you mean {answer.matched.name}?")
    return SearchAnswer(asked=asked, how="name" if uids else "none", customers=await _found(call, uids, "name"))


async def _customer(call: Call, customer: str) -> entity_refs.EntityRef:
    ref = await entity_refs.find_entity(call.client, call.tenant, customer, CUSTOMER)
    if ref is None:
        raise NotFound(f"no customer {customer!r}", code="customer_not_found")
    return ref


def _label(r: dict, customer_names: dict[str, list[str]]) -> str:
    """A node's words: a fact as `predicate: object`, a ticket as `T-… issue (stage)`, a customer by name."""
    labels = set(r["labels"] or ())
    if "Fact" in labels:
        return f"{r['predicate']}: {r['name']}"
    if "Ticket" in labels:
        return f"{r['key']} {r.get('issue') or ''} ({r.get('stage') or '?'})".replace("  ", " ")
    if "TicketEvent" in labels:
        return f"{r.get('event') or 'event'}"
    if "TechVisit" in labels:
        return "technician visit"
    if CUSTOMER in labels and r["key"] in customer_names and customer_names[r["key"]]:
        return customer_names[r["key"]][0]
    return str(r["text"] or r["name"] or "")[:120]


async def neighbourhood(call: Call, customer: str) -> console.ConsoleGraph:
    """One customer's part of the graph (module doc), drawn like the whole graph, labelled in words."""
    ref = await _customer(call, customer)
    client, tenant = call.client, call.tenant
    ids: set[int] = set()
    for statement, extra in ((q.FOCUS_FACTS, {}), (q.FOCUS_SESSIONS, {"limit": FOCUS_EPISODES}),
                             (q.FOCUS_TICKETS, {}), (q.FOCUS_LINE, {})):
        for r in await client.run(tenant, statement, {"uid": ref.uid, **extra}):
            ids.update(i for i in r["ids"] or () if i is not None)
    me = await client.run(tenant, console.q.NODE_OF_UID, {"uid": ref.uid})
    ids.update(r["id"] for r in me)
    rows = await client.run(tenant, q.NODES_BY_ID, {"ids": sorted(ids)})
    customer_uids = [r["key"] for r in rows if CUSTOMER in (r["labels"] or ())]
    on_file = await names.customer_names(client, tenant, customer_uids)
    nodes, keys = console.to_nodes(rows, lambda r: _label(r, on_file))
    edge_rows = await client.run(tenant, q.EDGES_AMONG, {"ids": sorted(ids)})
    return console.ConsoleGraph(tenant=tenant, nodes=nodes, edges=console.to_edges(edge_rows, keys, nodes),
                                truncated=False, focus=ref.uid)


# ---------------------------------------------------------------- the two clocks


class ClockRow(BaseModel):
    fact_id: str
    predicate: str
    object: str | None
    state: str
    kind: Literal["late", "ahead", "corrected"] = Field(
        description="late: learnt after it became true; ahead: on file before it is true; corrected: taken "
                    "off file (replaced or retracted) while it was still true in the world")
    valid_from_ms: int | None
    recorded_at_ms: int | None
    sentence: str = Field(examples=["true since 1 March 2026, learnt on 5 March 2026 from the customer's message (intake)"])


class Clocks(BaseModel):
    customer: str
    name: str
    rows: list[ClockRow] = Field(description="only the facts whose world time and record time disagree")


def _day(ms: int, other: int | None = None) -> str:
    """A day in words (UTC), with the time when it is not midnight or when `other` is within a day."""
    d = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    text = f"{d.day} {d:%B %Y}"
    if (d.hour, d.minute) != (0, 0) or (other is not None and abs(ms - other) < 86_400_000):
        text += f", {d:%H:%M} UTC"
    return text


def _source(r: dict) -> str:
    kind = r.get("source_kind")
    what = ("the customer's message" if kind == "CustomerMessage" else "a desk reply" if kind == "AgentReply"
            else f"a message from {r['speaker']}" if r.get("speaker") else None)
    by = r.get("asserted_by") or "someone"
    return f"from {what} ({by})" if what else f"written directly by {by}"


def clock_row(r: dict) -> ClockRow | None:
    """The row of one fact when its clocks disagree, else None (pure: the rule is tested alone)."""
    vf, rec, exp, vt = r["valid_from_ms"], r["recorded_at_ms"], r["expired_at_ms"], r["valid_to_ms"]
    if vf is None or rec is None:
        return None
    base = dict(fact_id=r["fact_id"], predicate=r["predicate"], object=r["object"], state=r["state"],
                valid_from_ms=vf, recorded_at_ms=rec)
    if exp is not None and (vt is None or vt > exp):
        replaced = f", replaced by a correction" if r["state"] == "superseded" else ""
        return ClockRow(kind="corrected", **base, sentence=(
            f"on file {_day(rec, exp)} to {_day(exp, rec)}{replaced}, though true in the world from {_day(vf)}"
            + ("" if vt is None else f" to {_day(vt)}")))
    if rec - vf > LATE_AFTER_MS:
        return ClockRow(kind="late", **base, sentence=f"true since {_day(vf, rec)}, learnt on {_day(rec, vf)} {_source(r)}")
    if vf - rec > LATE_AFTER_MS:
        return ClockRow(kind="ahead", **base, sentence=f"on file since {_day(rec, vf)}, true only from {_day(vf, rec)} {_source(r)}")
    return None


async def clocks(call: Call, customer: str) -> Clocks:
    ref = await _customer(call, customer)
    rows = await call.client.run(call.tenant, q.CLOCK_FACTS, {"uid": ref.uid})
    on_file = await names.customer_names(call.client, call.tenant, [ref.uid])
    return Clocks(customer=_key(ref.uid), name=(on_file.get(ref.uid) or [ref.name])[0],
                  rows=[row for r in rows if (row := clock_row(r)) is not None])
