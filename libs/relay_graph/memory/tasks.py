"""Tasks: work that any agent opens, hands to another agent and claims, kept as graph state (the
desk's tickets are the desk's own kind of it). Agents never message each other: a handoff is an
edge, and the agent it names finds the task by reading the graph or the live feed.

A task is `open` (anybody's, or waiting for the agent it was handed to), `claimed` (one owner; of N
agents or replicas racing for it exactly one wins) or `done` (by its owner)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.memory.names import CUSTOMER
from relay_graph.memory.queries import tasks as q
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import NotFound, StateConflict
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.runtime.times import from_ms, ms_of

TaskState = Literal["open", "claimed", "done"]


class TaskStep(BaseModel):
    kind: Literal["opened", "handed_off", "picked_up"]
    agent: str
    at: datetime
    to: str | None = Field(default=None, description="handed_off: the agent it was handed to")
    replica: str | None = Field(default=None, description="picked_up: the replica that took it, if it said")


class Task(BaseModel):
    task_id: str
    title: str
    about: str | None = Field(description="the subject it is about, as given")
    about_id: str | None = Field(description="the subject on file `about` names (a customer's id)")
    state: TaskState
    owner: str | None = Field(description="the agent holding it (state `claimed` or `done`)")
    waiting_for: str | None = Field(description="the agent it was handed to and who may claim it; null: anybody")
    opened_by: str
    opened_at: datetime
    updated_at: datetime
    done_at: datetime | None = None
    version: int
    trail: list[TaskStep] = Field(default=[], description="who opened, handed off and picked it up, oldest first")


class Claimed(BaseModel):
    won: bool = Field(description="true: the task is yours (just now, or already); false: another holds it")
    task: Task


def _task(row: dict[str, Any]) -> Task:
    return Task(task_id=row["task_id"], title=row["title"], about=row["about"], about_id=row.get("about_id"),
                state=row["state"], owner=row["owner"], waiting_for=row["waiting_for"], opened_by=row["opened_by"],
                opened_at=from_ms(row["opened_at_ms"]), updated_at=from_ms(row["updated_at_ms"]),
                done_at=from_ms(row.get("done_at_ms")),
                version=row["version"])


def _one(rows: list[dict[str, Any]], task_id: str) -> dict[str, Any]:
    if not rows:
        raise NotFound(f"no task {task_id!r} in this tenant")
    return rows[0]


async def open_task(client: GraphClient, tenant: str, *, title: str, agent: str, at: datetime,
                    about: str | None = None, for_agent: str | None = None) -> Task:
    """A new task opened by `agent`; `for_agent`: handed to that agent from the start. `about` is a
    subject as a write addresses it (a customer's id, or a name: names.subject_for_write)."""
    tenant = validate_tenant(tenant)
    about_uid = entity_uid(CUSTOMER, name_key(about)) if about else None  # the entity its facts are about
    params = {"id": "task-" + uuid.uuid4().hex[:16], "title": title, "about": about, "about_uid": about_uid,
              "for": for_agent, "agent": agent, "now": ms_of(at)}
    return _task((await client.run(tenant, q.OPEN, params))[0])


async def get_task(client: GraphClient, tenant: str, task_id: str) -> Task:
    tenant = validate_tenant(tenant)
    task = _task(_one(await client.run(tenant, q.GET, {"id": task_id}), task_id))
    trail = await client.run(tenant, q.TRAIL, {"id": task_id})
    kinds = {"OPENED": "opened", "HANDED_OFF": "handed_off", "PICKED_UP": "picked_up"}
    task.trail = [TaskStep(kind=kinds[r["kind"]], agent=r["agent"], at=from_ms(r["at_ms"]), to=r["to"],
                           replica=r["replica"] or None) for r in trail]
    return task


async def list_tasks(client: GraphClient, tenant: str, *, state: TaskState | None = None,
                     for_agent: str | None = None, limit: int = 100) -> list[Task]:
    """The newest first; `for_agent`: those waiting for or held by that agent."""
    tenant = validate_tenant(tenant)
    rows = await client.run(tenant, q.LIST, {"state": state, "for": for_agent, "limit": limit})
    return [_task(r) for r in rows]


async def hand_off(client: GraphClient, tenant: str, task_id: str, *, agent: str, to: str,
                   at: datetime) -> tuple[Task, bool]:
    """`agent` hands the task to `to`, releasing it; (task, changed). Handing it again to the agent
    it already waits for changes nothing."""
    tenant = validate_tenant(tenant)
    row = _one(await client.run(tenant, q.HAND_OFF, {"id": task_id, "agent": agent, "to": to, "now": ms_of(at)}),
               task_id)
    task = _task(row)
    if not row["changed"]:
        if task.state == "done":
            raise StateConflict(f"task {task_id} is done: open a new one")
        if task.owner is not None and task.owner != agent:
            raise StateConflict(f"task {task_id} is held by {task.owner}: only its owner hands it on")
    return task, bool(row["changed"])


async def claim(client: GraphClient, tenant: str, task_id: str, *, agent: str, replica: str | None,
                at: datetime) -> tuple[Claimed, bool]:
    """`agent` (its `replica`, when several run) tries to take the task; (answer, picked now)."""
    tenant = validate_tenant(tenant)
    row = _one(await client.run(tenant, q.CLAIM, {"id": task_id, "agent": agent, "replica": replica or "",
                                                  "now": ms_of(at)}), task_id)
    task = _task(row)
    if not row["won"] and task.state == "open" and task.waiting_for not in (None, agent):
        raise StateConflict(f"task {task_id} was handed to {task.waiting_for}: only that agent claims it")
    return Claimed(won=bool(row["won"]), task=task), bool(row["picked"])


async def complete(client: GraphClient, tenant: str, task_id: str, *, agent: str, at: datetime) -> tuple[Task, bool]:
    """The owner marks the task done; (task, changed)."""
    tenant = validate_tenant(tenant)
    row = _one(await client.run(tenant, q.DONE, {"id": task_id, "agent": agent, "now": ms_of(at)}), task_id)
    task = _task(row)
    if not row["changed"] and not (task.state == "done" and task.owner == agent):
        holder = f"held by {task.owner}" if task.owner else "not claimed"
        raise StateConflict(f"task {task_id} is {holder}: its owner marks it done after claiming it")
    return task, bool(row["changed"])
