"""Tools over tasks: open one, hand it to another agent, claim it, mark it done, list them. The same
use cases as the REST routes (relay_graph.usecases.tasks); the calling agent is the actor."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from relay_graph.memory import tasks
from relay_graph.memory.inputs import text_type
from relay_graph.memory.tasks import Task
from relay_graph.tools.envelope import Shape, ToolResult, when
from relay_graph.tools.toolset import tool
from relay_graph.tools.types import Args, Identifier, Name, Role
from relay_graph.usecases import tasks as task_cases
from relay_graph.usecases.context import Call


def task_line(t: Task) -> str:
    holder = f", held by {t.owner}" if t.owner else (f", waiting for {t.waiting_for}" if t.waiting_for else "")
    return f"task {t.task_id}: {t.title!r}, {t.state}{holder} (updated {when(t.updated_at)}, version {t.version})"


class OpenTaskInput(Args):
    title: text_type(500) = Field(description="what is to be done")  # type: ignore[valid-type]
    about: Name | None = Field(default=None, description="the subject it is about (a customer's id or a name)")
    for_agent: Role | None = Field(default=None, description="hand it to this agent from the start")


class TaskOutput(BaseModel):
    task: Task
    changed: bool = True


@tool("open_task", """Open a task that another agent can claim; with `for_agent`, handed to that agent.
      Recorded as (you)-[:OPENED]->(task) and announced on the live feed.""",
      input=OpenTaskInput, output=TaskOutput, writes=True)
async def open_task(ctx: Call, args: OpenTaskInput) -> ToolResult:
    task = await task_cases.open_task(ctx, title=args.title, about=args.about, for_agent=args.for_agent)
    return ToolResult(tool="open_task", shape=Shape.ANSWERED, data=TaskOutput(task=task), how_i_know=[task_line(task)])


class HandTaskInput(Args):
    task_id: Identifier
    to: Role = Field(description="the agent that should take it")


@tool("hand_off_task", """Hand a task to another agent: recorded as (you)-[:HANDED_OFF]->(task); you let go
      of it and only that agent may claim it.""", input=HandTaskInput, output=TaskOutput, writes=True)
async def hand_off_task(ctx: Call, args: HandTaskInput) -> ToolResult:
    task, changed = await task_cases.hand_off(ctx, args.task_id, to=args.to)
    return ToolResult(tool="hand_off_task", shape=Shape.ANSWERED, data=TaskOutput(task=task, changed=changed),
                      how_i_know=[task_line(task)])


class ClaimTaskInput(Args):
    task_id: Identifier
    replica: Identifier | None = Field(default=None, description="which copy of you is claiming, when several run")


class ClaimOutput(BaseModel):
    won: bool = Field(description="true: the task is yours; false: another agent holds it")
    task: Task


@tool("claim_task", """Take a task atomically: of N agents or replicas racing, exactly one wins.""",
      input=ClaimTaskInput, output=ClaimOutput, writes=True)
async def claim_task(ctx: Call, args: ClaimTaskInput) -> ToolResult:
    claimed = await task_cases.claim(ctx, args.task_id, replica=args.replica)
    return ToolResult(tool="claim_task", shape=Shape.ANSWERED, data=ClaimOutput(**claimed.model_dump()),
                      how_i_know=[task_line(claimed.task)])


class TaskIdInput(Args):
    task_id: Identifier


@tool("complete_task", """Mark a task you hold as done.""", input=TaskIdInput, output=TaskOutput, writes=True)
async def complete_task(ctx: Call, args: TaskIdInput) -> ToolResult:
    task, changed = await task_cases.complete(ctx, args.task_id)
    return ToolResult(tool="complete_task", shape=Shape.ANSWERED, data=TaskOutput(task=task, changed=changed),
                      how_i_know=[task_line(task)])


class ListTasksInput(Args):
    state: Literal["open", "claimed", "done"] | None = None
    mine: bool = Field(default=False, description="only those waiting for or held by you")


class TaskList(BaseModel):
    tasks: list[Task]


@tool("list_tasks", """Tasks of this tenant, the newest change first; `mine`: those waiting for or held by
      you.""", input=ListTasksInput, output=TaskList)
async def list_tasks(ctx: Call, args: ListTasksInput) -> ToolResult:
    found = await tasks.list_tasks(ctx.client, ctx.tenant, state=args.state,
                                   for_agent=ctx.agent if args.mine else None)
    return ToolResult(tool="list_tasks", shape=Shape.ANSWERED if found else Shape.NOT_IN_GRAPH,
                      data=TaskList(tasks=found), how_i_know=[task_line(t) for t in found])
