"""The latest benchmark results for the console's Benchmarks page (any valid key): the suite's
figures, the memory benchmark's accuracy by question type (Relay against the vector store), and the
console's render benchmark, read from bench/results/ as the benchmarks last wrote them. A part that
was never run is null."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from ..deps import BearerDep, HttpDep, _identified, _token
from ..errors import responses
from ..schemas import Answer

router = APIRouter(prefix="/v1/console", tags=["console"])
RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results"


class SuiteRow(BaseModel):
    part: str
    figure: str
    value: str
    target: str
    passed: bool | None = Field(description="met its target; null: a figure without one")


class Suite(BaseModel):
    started_at: str
    rows: list[SuiteRow]


class Accuracy(BaseModel):
    type: str = Field(description="the question type")
    n: int
    relay: float = Field(description="Relay's accuracy, 0..1")
    vector: float = Field(description="the vector store's accuracy on the same questions, 0..1")


class MemoryBench(BaseModel):
    started_at: str
    reader: str | None
    by_type: list[Accuracy]


class RenderRow(BaseModel):
    nodes: int
    edges: int
    first_paint_ms: float
    fps: float


class Benchmarks(BaseModel):
    suite: Suite | None
    memory: MemoryBench | None
    render: list[RenderRow] | None


def _read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def latest(results: Path = RESULTS) -> Benchmarks:
    suite = _read(results / "suite.json")
    memory = _read(results / "memory.json")
    render = _read(results / "console_render.json")
    return Benchmarks(
        suite=None if suite is None else Suite(started_at=suite["started_at"], rows=[
            SuiteRow(part=r["part"], figure=r["figure"], value=r["value"], target=r["target"], passed=r["pass"])
            for r in suite["rows"]]),
        memory=None if memory is None else MemoryBench(
            started_at=memory["started_at"], reader=memory.get("reader"),
            by_type=[Accuracy(type=t, n=v["n"], relay=v["relay"]["accuracy"], vector=v["vector"]["accuracy"])
                     for t, v in memory["summary"]["by_type"].items()]),
        render=None if render is None else [RenderRow(**{k: r[k] for k in ("nodes", "edges", "first_paint_ms", "fps")})
                                            for r in render["rows"]])


@router.get("/benchmarks", response_model=Answer[Benchmarks], responses=responses(401, 429, 503),
            summary="The latest benchmark results (suite figures, accuracy by question type, render)")
async def benchmarks(http: HttpDep, credentials: BearerDep, request: Request) -> Benchmarks:
    caller = await _identified(http, request, http.auth.identify(_token(credentials)))
    await http.admit(caller)
    return latest()
