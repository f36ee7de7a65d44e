"""Tasks for any team of agents (relay_graph.memory.tasks): open, hand off, claim, mark done. Each
writes, then records on the call the TaskChanged it owes, announced when the call is flushed (the live feed shows
it; an outside agent watching for work sees it there). The actor is the call's agent."""

from __future__ import annotations

from relay_graph.memory import names, tasks
from relay_graph.memory.tasks import Claimed, Task
from relay_graph.runtime.streams import TaskChanged
from relay_graph.usecases.context import Call



def _changed(call: Call, task: Task, change: str) -> None:
    call.owe(TaskChanged(tenant=call.tenant, id=task.task_id, version=task.version, change=change, actor=call.agent))


async def open_task(call: Call, *, title: str, about: str | None = None,
                    for_agent: str | None = None) -> Task:
    if about is not None:  # a customer's exact name is that customer, as for every write
        about = await names.subject_for_write(call.client, call.tenant, about)
    task = await tasks.open_task(call.client, call.tenant, title=title, about=about, for_agent=for_agent,
                                 agent=call.agent, at=call.now())
    _changed(call, task, "handed_off" if for_agent else "opened")
    return task


async def hand_off(call: Call, task_id: str, *, to: str) -> tuple[Task, bool]:
    """The task, and whether this call changed it (a repeat writes and owes nothing)."""
    task, changed = await tasks.hand_off(call.client, call.tenant, task_id, agent=call.agent, to=to, at=call.now())
    if changed:
        _changed(call, task, "handed_off")
    return task, changed


async def claim(call: Call, task_id: str, *, replica: str | None = None) -> Claimed:
    claimed, picked = await tasks.claim(call.client, call.tenant, task_id, agent=call.agent, replica=replica,
                                        at=call.now())
    if picked:
        _changed(call, claimed.task, "picked_up")
    return claimed


async def complete(call: Call, task_id: str) -> tuple[Task, bool]:
    """The task, and whether this call changed it (a repeat writes and owes nothing)."""
    task, changed = await tasks.complete(call.client, call.tenant, task_id, agent=call.agent, at=call.now())
    if changed:
        _changed(call, task, "done")
    return task, changed
