"""The verbs, written once: each builds a `Call` and hands it to the client's `_do`, which the sync
client answers at once and the async client as an awaitable."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from . import models as m
from .calls import Call, make

T = "/v1/tenants/{t}"


class MemoryVerbs:
    """What an agent does with its tenant's memory (a tenant key, or an agent key from `create_agent`)."""

    tenant: str

    def _do(self, call: Call) -> Any:  # pragma: no cover - the clients define it
        raise NotImplementedError

    def _call(self, method: str, path: str, answer: type[m.Model] | None, **kw: Any) -> Any:
        return self._do(make(method, T + path, answer, t=self.tenant, **kw))

    # ---- facts
    def remember(self, subject: str, predicate: str, object: str, *, valid_from: datetime | str | None = None,
                 source: str | None = None, label: str | None = None) -> m.Written:
        """Assert subject · predicate · object, true since `valid_from` (default now). A repeat
        corroborates, another value of a single-valued predicate supersedes or opens a conflict."""
        body = {"subject": subject, "predicate": predicate, "object": object, "valid_from": valid_from,
                "source": source, "agent": label}
        return self._call("POST", "/facts", m.Written, write=True, body=body)

    def remember_many(self, facts: list[dict[str, Any]]) -> m.BatchWritten:
        """Many facts in one request; each is answered in its slot (a bad one does not stop the rest)."""
        return self._call("POST", "/facts/batch", m.BatchWritten, write=True, body={"facts": facts})

    def retire(self, subject: str, predicate: str, object: str | None = None, *,
               valid_to: datetime | str | None = None) -> m.Retired:
        """End a fact (or one value of a multi-valued predicate), true until `valid_to` (default now)."""
        body = {"subject": subject, "predicate": predicate, "object": object, "valid_to": valid_to}
        return self._call("POST", "/facts/retire", m.Retired, write=True, body=body)

    def facts(self, subject: str, predicate: str | None = None, *, as_of: datetime | str | None = None,
              clock: Literal["world", "belief"] = "world") -> m.Facts:
        """What is current now; with `as_of`, what was true in the world (`world`) or on file
        (`belief`) at that time."""
        params = {"subject": subject, "predicate": predicate, "as_of": as_of, "clock": clock}
        return self._call("GET", "/facts", m.Facts, params=params)

    def history(self, subject: str, predicate: str | None = None) -> m.Facts:
        """Every version of a subject's facts, current and ended."""
        return self._call("GET", "/facts/history", m.Facts, params={"subject": subject, "predicate": predicate})

    def claims(self, subject: str, predicate: str) -> m.Claims:
        """Every agent's claim for a single-valued predicate, best first, and the open conflict."""
        return self._call("GET", "/claims", m.Claims, params={"subject": subject, "predicate": predicate})

    def settle(self, conflict_id: str, fact_id: str, by: str) -> m.Settled:
        """A person says which claim is right: the conflict closes and the agents' trust moves."""
        return self._call("POST", "/conflicts/{id}/settle", m.Settled, write=True, id=conflict_id,
                          body={"fact_id": fact_id, "by": by})

    # ---- episodes and recall
    def remember_turns(self, turns: list[m.Turn | dict[str, Any]]) -> m.Remembered:
        """Turns or notes of any conversation, as episodes (with embeddings)."""
        body = {"episodes": [t if isinstance(t, m.Turn) else m.Turn.model_validate(t) for t in turns]}
        return self._call("POST", "/episodes", m.Remembered, write=True, body=body)

    def remember_turn(self, session: str, speaker: str, text: str, at: datetime | str | None = None,
                      **extra: Any) -> m.Remembered:
        return self.remember_turns([m.Turn(session=session, speaker=speaker, text=text, at=at, **extra)])

    def episodes(self, session: str | None = None, *, session_prefix: str | None = None, after: str | None = None,
                 limit: int = 100) -> m.Episodes:
        """A page of one session's turns (or every session's whose id starts with `session_prefix`) in
        order of arrival, exactly as written; pass the page's `next` as `after` for the next one."""
        params = {"session": session, "session_prefix": session_prefix, "after": after, "limit": limit}
        return self._call("GET", "/episodes", m.Episodes, params=params)

    def recall(self, q: str, *, k: int = 10, subject: str | None = None, session: str | None = None) -> m.Recalled:
        """The turns and facts that answer `q`, each turn with the path that led to it."""
        params = {"q": q, "k": k, "subject": subject, "session": session}
        return self._call("GET", "/recall", m.Recalled, params=params)

    # ---- tasks: work one agent hands to another
    def open_task(self, title: str, *, about: str | None = None, for_agent: str | None = None) -> m.Task:
        """A task any agent may claim; `for_agent`: handed to that agent from the start."""
        body = {"title": title, "about": about, "for": for_agent}
        return self._call("POST", "/tasks", m.Task, write=True, body=body)

    def hand_off(self, task_id: str, to: str) -> m.Task:
        """Hand the task to agent `to` (you let go of it; only `to` may claim it)."""
        return self._call("POST", "/tasks/{id}/handoff", m.Task, write=True, id=task_id, body={"to": to})

    def claim(self, task_id: str, *, replica: str | None = None) -> m.Claimed:
        """Take the task; `won` is true for exactly one of N racing claims."""
        return self._call("POST", "/tasks/{id}/claim", m.Claimed, write=True, id=task_id, body={"replica": replica})

    def done(self, task_id: str) -> m.Task:
        return self._call("POST", "/tasks/{id}/done", m.Task, write=True, id=task_id)

    def task(self, task_id: str) -> m.Task:
        """One task with its trail (who opened, handed off and picked it up)."""
        return self._call("GET", "/tasks/{id}", m.Task, id=task_id)

    def tasks(self, *, state: str | None = None, for_agent: str | None = None) -> m.Tasks:
        return self._call("GET", "/tasks", m.Tasks, params={"state": state, "for": for_agent})

    # ---- the tenant's own vocabulary
    def define_predicate(self, name: str, cardinality: Literal["single", "multi"], *,
                         object: Literal["text", "entity", "number", "time"] = "text",
                         conflict: Literal["supersede", "keep_both"] | None = None,
                         description: str | None = None) -> m.Predicate:
        """Register (or change) a predicate of the tenant's own; then `remember` writes it like a
        built-in one. Changing `cardinality` while it has facts is refused (Conflict)."""
        body = {"cardinality": cardinality, "object": object, "conflict": conflict, "description": description}
        return self._call("PUT", "/predicates/{name}", m.Predicate, write=True, name=name, body=body)

    def predicates(self) -> m.Predicates:
        """The built-in predicates and the tenant's own."""
        return self._call("GET", "/predicates", m.Predicates)

    def retire_predicate(self, name: str) -> None:
        """Later writes of it are refused; its facts stay and are read as before (tenant key)."""
        return self._call("DELETE", "/predicates/{name}", None, write=True, name=name)

    # ---- agents (tenant key)
    def create_agent(self, agent: str) -> m.AgentCreated:
        """A key for one agent: whoever sends it writes as `agent` (shown once)."""
        return self._do(make("POST", "/v1/tenants/{t}/agents", m.AgentCreated, t=self.tenant, body={"agent": agent}))

    def agents(self) -> m.Agents:
        return self._do(make("GET", "/v1/tenants/{t}/agents", m.Agents, t=self.tenant))

    def delete_agent(self, agent: str) -> None:
        return self._do(make("DELETE", "/v1/tenants/{t}/agents/{agent}", None, t=self.tenant, agent=agent))


class AdminVerbs:
    """What the operator does with the admin key."""

    def _do(self, call: Call) -> Any:  # pragma: no cover - the clients define it
        raise NotImplementedError

    def create_tenant(self, tenant: str, *, world: bool = False, region: str | None = None) -> m.TenantCreated:
        """A tenant and its key (shown once). `world=False` (the client's default) makes a memory-only
        tenant; `world=True` seeds the demo ISP's catalogue and network."""
        body = {"tenant": tenant, "world": world, "region": region}
        return self._do(make("POST", "/v1/tenants", m.TenantCreated, body=body))

    def delete_tenant(self, tenant: str, *, keep_snapshots: bool = False) -> dict[str, Any]:
        """Removes everything keyed by the tenant (its snapshots too, unless kept)."""
        body = {"confirm": tenant, "keep_snapshots": keep_snapshots or None}
        return self._do(make("POST", "/v1/admin/tenants/{tenant}/delete", None, tenant=tenant, body=body))
