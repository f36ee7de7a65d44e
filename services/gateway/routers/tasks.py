"""Tasks any agent opens, hands to another agent and claims (the desk's tickets are its own kind).
The agent is the key's: the tenant key acts as `api`, an agent key as its agent."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response
from pydantic import Field

from relay_graph.memory.inputs import Identifier, Name, text_type
from relay_graph.memory import tasks
from relay_graph.memory.models import AGENT_PATTERN
from relay_graph.memory.tasks import Claimed, Task
from relay_graph.usecases import tasks as task_cases

from ..deps import CallDep, MemoryDep, TenantDep
from ..errors import responses
from ..idempotency import IdempotencyDep
from ..schemas import Answer, Strict

router = APIRouter(prefix="/v1/tenants/{t}/tasks", tags=["tasks"])

TaskId = Annotated[Identifier, Path(alias="id", examples=["task-1f0e4b2a9c3d5e6f"])]
# the same agent names as the task tools' (tools.types.Role): an agent key's, a desk agent's, mcp:<name>
AgentId = Annotated[str, Field(pattern=AGENT_PATTERN, examples=["crm-bot"])]
WRITES = responses(401, 403, 404, 409, 413, 422, 429, 503)


class TaskBody(Strict):
    model_config = Strict.model_config | {"populate_by_name": True}

    title: text_type(500) = Field(examples=["call Asha back about her move"])  # type: ignore[valid-type]
    about: Name | None = Field(default=None, description="the subject it is about: a customer's id or a name "
                               "(linked to the entity when exactly one has it)", examples=["asha rao"])
    for_: AgentId | None = Field(default=None, alias="for", description="hand it to this agent from the start: "
                                 "only that agent may claim it; default anybody")


class HandoffBody(Strict):
    to: AgentId = Field(description="the agent that should take it; only that agent may claim it next")


class ClaimBody(Strict):
    replica: Identifier | None = Field(default=None, description="which copy of the agent is claiming, when "
                                       "several run with one key: of N racing, one wins")


class TaskList(Strict):
    tasks: list[Task]


@router.post("", status_code=201, response_model=Answer[Task], responses=WRITES,
             summary="Open a task (optionally handed to one agent from the start)")
async def open_task(body: TaskBody, call: CallDep, idem: IdempotencyDep, response: Response) -> Task:
    async def work() -> Task:
        task = await task_cases.open_task(call, title=body.title, about=body.about, for_agent=body.for_)
        response.status_code = 201
        return task

    return await idem.run_once(call.tenant, "tasks", body, response, work)


@router.get("", response_model=Answer[TaskList], responses=responses(401, 403, 422, 429, 503),
            summary="Tasks, the newest change first")
async def list_tasks(
    tenant: TenantDep, memory: MemoryDep,
    state: Annotated[Literal["open", "claimed", "done"] | None, Query()] = None,
    for_: Annotated[str | None, Query(alias="for", pattern=AGENT_PATTERN,
                                      description="only those waiting for or held by this agent")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> TaskList:
    return TaskList(tasks=await tasks.list_tasks(memory.client, tenant, state=state, for_agent=for_, limit=limit))


@router.get("/{id}", response_model=Answer[Task], responses=responses(401, 403, 404, 422, 429, 503),
            summary="One task with its trail: who opened, handed off and picked it up")
async def get_task(tenant: TenantDep, memory: MemoryDep, task_id: TaskId) -> Task:
    return await tasks.get_task(memory.client, tenant, task_id)


@router.post("/{id}/handoff", response_model=Answer[Task], responses=WRITES,
             summary="Hand the task to another agent (it is released; that agent claims it)")
async def hand_off(body: HandoffBody, call: CallDep, task_id: TaskId) -> Task:
    return (await task_cases.hand_off(call, task_id, to=body.to))[0]


@router.post("/{id}/claim", response_model=Answer[Claimed], responses=WRITES,
             summary="Take the task: one winner of N racing claims")
async def claim(call: CallDep, task_id: TaskId, body: ClaimBody | None = None) -> Claimed:
    return await task_cases.claim(call, task_id, replica=body.replica if body else None)


@router.post("/{id}/done", response_model=Answer[Task], responses=WRITES,
             summary="The owner marks the task done")
async def done(call: CallDep, task_id: TaskId) -> Task:
    return (await task_cases.complete(call, task_id))[0]
