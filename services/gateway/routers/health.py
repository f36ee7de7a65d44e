"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from ..deps import HttpDep
from ..errors import ErrorDetail
from ..readiness import missing, refuses_password
from ..schemas import Answer

router = APIRouter(tags=["health"])


class Status(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    missing: list[str] = []
    error: ErrorDetail | None = Field(default=None, exclude_if=lambda v: v is None,
                                      description="only on the 503: `not_ready` and what is not answering")


@router.get("/healthz", response_model=Answer[Status], summary="200 while the process runs")
async def healthz() -> Status:
    return Status(status="ok")


@router.get("/readyz", response_model=Answer[Readiness], responses={503: {"model": Readiness}},
            summary="200 once every dependency answers; 503 naming what is missing",
            description="The gateway process (`python -m services.gateway`) checks: `falkordb` (the server "
            "answers a graph query), `streams` (the Redis Streams on that server answer), and for each desk "
            "agent (`intake`, `resolver`, `netops`; `RELAY_READY_AGENTS`) that its consumer group exists on "
            "the stream it reads (turns, tickets, network) and at least one of its replicas has a fresh "
            "heartbeat. 503 lists the names of the checks that failed in `missing`; its message says when "
            "FalkorDB refused the password (RELAY_FALKORDB_PASSWORD).")
async def readyz(http: HttpDep, response: Response) -> Readiness:
    timeout = http.settings.readiness_timeout_seconds
    gone = await missing(http.readiness, timeout)
    if gone:
        message = f"not answering: {', '.join(gone)}"
        if await refuses_password(http.settings, timeout):
            message += "; FalkorDB refused the password: check RELAY_FALKORDB_PASSWORD"
        response.status_code = 503
        response.headers["Retry-After"] = "1"
        return Readiness(status="not_ready", missing=gone, error=ErrorDetail(code="not_ready", message=message))
    return Readiness(status="ready", missing=[])
