"""Playing a storyline through the desk, over the gateway's HTTP API only, one event at a time in
step order (a step's real moment is taken once it is done, so step order is time order, except the
homes' first lines: see below).

The storyline names its people; Relay knows them by id. A customer's first chat turn is sent
without `customer` and with their `name`: the desk makes them a customer and returns their id
(`ids`: name -> id). Everything after that (their turns, notes, facts, lines, tickets, and the
benchmark's questions to either system) addresses that id. Every home's first line needs the id, so
the region is seeded first (`POST /world`, no customers) and the first lines are connected in one
`POST /world` once every customer has their id, right after the first turns (those line steps' moment
is that call's).

- chat: `POST /chat?wait=..` in the story's conversation (the customer's words; intake files what
  they state and opens tickets);
- note: an agent's note, `POST /tools/remember` with that agent's own key (an episode, linked to the
  customer);
- fact: `POST /facts` with the named agent's own key (`POST /agents` issues one per agent on first
  need: the writer is the key's agent, so trust is learnt per agent); a late correction carries
  `valid_from` = the real moment of the older step it names. The correction is the records office's
  claim against the value intake filed from the chat, so it opens a conflict, which a person settles
  for the correction (the returned letter is proof), as a desk would;
- line: the customer's home connected in a city (`POST /customers/{id}/line`; the first ones in one
  `POST /world`);
- outage: the city hub (found by name in `GET /network/critical`) marked down or up (`POST /network/nodes/{id}/status`);
  netops declares the outage;
- confirm: the customer's newest ticket for that issue confirmed fixed (`POST /tickets/{id}/confirm`).

What was said (chat turns and notes) is kept with its moment and customer id: the vector store is
built from exactly those turns. `check_ids` then asks `GET /customers?name=` for every name: each
must find exactly that customer's id (a write that used the name as a key would have made another)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable
from urllib.parse import quote

import httpx

from . import vocab as v
from .storyline import Event, Storyline

CHAT_WAIT_S = 10


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


@dataclass
class Loaded:
    step_at: dict[int, str] = field(default_factory=dict)  # step -> the real moment it was done
    ids: dict[str, str] = field(default_factory=dict)  # the storyline's name -> the id Relay gave
    turns: list[dict[str, Any]] = field(default_factory=list)  # {step, customer (id), speaker, text, at}
    outcomes: Counter = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {"events": len(self.step_at), "turns": len(self.turns), "customer_ids": dict(self.ids),
                "seconds": round(self.seconds, 1),
                "outcomes": dict(sorted(self.outcomes.items())), "errors": len(self.errors),
                "first_errors": self.errors[:10]}


class Loader:
    def __init__(self, http: httpx.AsyncClient, tenant: str, headers: dict[str, str],
                 progress: Callable[[str], None] = lambda _: None):
        self.http, self.headers, self.progress = http, headers, progress
        self.base = f"/v1/tenants/{quote(tenant, safe='')}"
        self.sessions: dict[str, str] = {}
        self.hubs: dict[str, str] = {}  # city -> its hub's node id
        self.agent_keys: dict[str, dict[str, str]] = {}
        self.out = Loaded()

    async def _post(self, path: str, body: dict, params: dict | None = None, timeout: float = 30.0,
                    headers: dict[str, str] | None = None) -> httpx.Response:
        return await self.http.post(self.base + path, json=body, params=params, headers=headers or self.headers,
                                    timeout=timeout)

    async def _as(self, agent: str) -> dict[str, str]:
        """The headers of `agent`'s own key (issued with the tenant's key on first need)."""
        if agent not in self.agent_keys:
            r = await self._post("/agents", {"agent": agent})
            if r.status_code != 201:
                raise RuntimeError(f"POST /agents {agent} -> {r.status_code}: {r.text[:300]}")
            self.agent_keys[agent] = {"Authorization": f"Bearer {r.json()['api_key']}"}
        return self.agent_keys[agent]

    def _fail(self, e: Event, r: httpx.Response | None, what: str = "") -> None:
        self.out.outcomes[f"{e.kind}_failed"] += 1
        detail = f"{r.status_code} {r.text[:200]}" if r is not None else what
        self.out.errors.append(f"step {e.step} {e.kind} {e.customer or ''}: {detail}")

    async def _world(self, customers: list[dict[str, str]]) -> None:
        r = await self._post("/world", {"region": v.REGION, "customers": customers}, timeout=180.0)
        if r.status_code != 200:
            raise RuntimeError(f"POST /world -> {r.status_code}: {r.text[:300]}")

    async def _connect_first(self, first: list[Event]) -> None:
        """The homes' first lines, by id, in one call (a customer with no id yet is an error)."""
        known = [e for e in first if e.customer in self.out.ids]
        for e in first:
            if e.customer not in self.out.ids:
                self._fail(e, None, "no customer id: their first chat turn did not give one")
        await self._world([{"customer": self.out.ids[e.customer], "address": e.city} for e in known])
        for e in first:
            self.out.step_at[e.step] = now_iso()

    async def play(self, story: Storyline) -> Loaded:
        started = time.monotonic()
        first = [e for e in story.events if e.kind == "line" and e.step < len(story.customers)]
        await self._world([])
        rest = [e for e in story.events if e.step >= len(first)]
        every = max(1, len(rest) // 20)
        pending = first
        for i, e in enumerate(rest, start=1):
            if pending and not (e.kind == "chat" and e.customer not in self.out.ids):
                await self._connect_first(pending)  # before anything but a customer's first turn
                pending = []
            await getattr(self, f"_{e.kind}")(e)
            self.out.step_at[e.step] = now_iso()
            if e.is_turn:
                self.out.turns.append({"step": e.step, "customer": self.out.ids.get(e.customer) if e.customer else None,
                                       "speaker": e.speaker, "text": e.text, "at": self.out.step_at[e.step]})
            if i % every == 0 or i == len(rest):
                o = self.out.outcomes
                self.progress(f"  {i}/{len(rest)} events played ({len(self.out.turns)} turns, "
                              f"{o['chat_answered']} chat replies, {o['confirm_ok']} tickets confirmed, "
                              f"{len(self.out.errors)} errors) in {time.monotonic() - started:.0f}s")
        self.out.seconds = time.monotonic() - started
        return self.out

    def _id(self, e: Event) -> str | None:
        """The id of the event's customer; None (and a failure) before their first turn gave one."""
        cid = self.out.ids.get(e.customer)
        if cid is None:
            self._fail(e, None, "no customer id yet")
        return cid

    async def _chat(self, e: Event) -> None:
        known = self.out.ids.get(e.customer)
        # a first turn names nobody: the desk makes the customer (named) and returns their id
        body = {"customer": known, "text": e.text} if known else {"name": e.customer, "text": e.text}
        if e.story in self.sessions:
            body["session"] = self.sessions[e.story]
        r = await self._post("/chat", body, params={"wait": CHAT_WAIT_S}, timeout=CHAT_WAIT_S + 20)
        if r.status_code not in (200, 202):
            return self._fail(e, r)
        data = r.json()
        if known is None:
            self.out.ids[e.customer] = data["customer"]
        elif data["customer"] != known:
            return self._fail(e, r, f"the reply is for {data['customer']}, not {known}")
        self.sessions[e.story] = data["session"]
        self.out.outcomes["chat_answered" if r.status_code == 200 else "chat_not_answered_in_time"] += 1

    async def _note(self, e: Event) -> None:
        body: dict[str, Any] = {"session": f"notes-{e.story}", "kind": "InternalNote",
                                "turns": [{"speaker": e.speaker, "text": e.text}]}
        if e.customer:
            if (cid := self._id(e)) is None:
                return
            body["customer"] = cid
        r = await self._post("/tools/remember", body, headers=await self._as(e.speaker))
        if r.status_code != 200:
            return self._fail(e, r)
        self.out.outcomes["note"] += 1

    async def _fact(self, e: Event) -> None:
        if (cid := self._id(e)) is None:
            return
        body = {"subject": cid, "predicate": e.predicate, "object": e.object}
        if e.valid_from_step is not None:
            body["valid_from"] = self.out.step_at[e.valid_from_step]
        r = await self._post("/facts", body, headers=await self._as(e.agent or "api"))
        if r.status_code != 201:
            return self._fail(e, r)
        res = r.json()
        self.out.outcomes[f"fact_{res['outcome']}"] += 1
        if e.agent == v.RECORDS and res["outcome"] == "conflict":
            r = await self._post(f"/conflicts/{res['conflict_id']}/settle",
                                 {"fact_id": res["fact_id"], "by": "records office"})
            if r.status_code != 200:
                return self._fail(e, r, "settling the correction")
            self.out.outcomes["correction_settled"] += 1

    async def _line(self, e: Event) -> None:
        if (cid := self._id(e)) is None:
            return
        r = await self._post(f"/customers/{quote(cid, safe='')}/line", {"address": e.city})
        if r.status_code != 200:
            return self._fail(e, r)
        self.out.outcomes["line_moved"] += 1

    async def _hub(self, city: str) -> str | None:
        """The city hub's node id, by its name, from the network's node list (GET /network/critical
        ranks every node; asked once)."""
        if not self.hubs:
            r = await self.http.get(f"{self.base}/network/critical", params={"top": 1000}, headers=self.headers,
                                    timeout=120.0)
            if r.status_code == 200:
                self.hubs = {n["name"]: n["node_id"] for n in r.json()["nodes"] if n.get("kind") == "Pop"}
        return self.hubs.get(f"{city} hub")

    async def _outage(self, e: Event) -> None:
        hub = await self._hub(e.city)
        if hub is None:
            return self._fail(e, None, f"no hub found for {e.city}")
        r = await self._post(f"/network/nodes/{quote(hub, safe='')}/status", {"up": e.up, "by": v.NETOPS})
        if r.status_code != 200:
            return self._fail(e, r)
        self.out.outcomes["outage_up" if e.up else "outage_down"] += 1

    async def _confirm(self, e: Event) -> None:
        if (cid := self._id(e)) is None:
            return
        r = await self.http.get(f"{self.base}/tickets", params={"customer": cid}, headers=self.headers)
        if r.status_code != 200:
            return self._fail(e, r)
        mine = [t for t in r.json()["tickets"] if t.get("issue") == e.issue and t.get("stage") != "closed"]
        if not mine:
            self.out.outcomes["confirm_no_ticket"] += 1
            return
        r = await self._post(f"/tickets/{quote(mine[0]['id'], safe='')}/confirm", {"fixed": True})
        self.out.outcomes["confirm_ok" if r.status_code == 200 else f"confirm_{r.status_code}"] += 1

    async def check_ids(self) -> dict[str, Any]:
        """Every storyline name finds exactly its customer's id (`GET /customers?name=`): nothing was
        written under a name as if it were a customer's key."""
        ok, wrong = 0, []
        for name, cid in sorted(self.out.ids.items()):
            r = await self.http.get(f"{self.base}/customers", params={"name": name}, headers=self.headers)
            found = [c["id"] for c in r.json().get("customers", [])] if r.status_code == 200 else []
            if found == [cid]:
                ok += 1
            else:
                wrong.append(f"{name}: {r.status_code} {found or r.text[:200]}, not [{cid}]")
        return {"customers": len(self.out.ids), "found_by_name": ok, "wrong": wrong}
