"""Liveness and readiness."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from ..deps import ServicesDep
from ..readiness import missing, refuses_password

router = APIRouter(tags=["health"])


class Status(BaseModel):
    status: str


class Readiness(BaseModel):
    status: str
    missing: list[str] = []


@router.get("/healthz", response_model=Status, summary="200 while the process runs")
async def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", response_model=Readiness, responses={503: {"model": Readiness}},
            summary="200 once every dependency answers; 503 naming what is missing",
            description="The gateway process (`python -m services.gateway`) checks: `falkordb` (the server "
            "answers a graph query), `streams` (the Redis Streams on that server answer), and for each desk "
            "agent (`intake`, `resolver`, `netops`; `RELAY_READY_AGENTS`) that its consumer group exists on "
            "the stream it reads (turns, tickets, network) and at least one of its replicas has a fresh "
            "heartbeat. 503 lists the names of the checks that failed in `missing`; its message says when "
            "FalkorDB refused the password (RELAY_FALKORDB_PASSWORD).")
async def readyz(services: ServicesDep) -> JSONResponse:
    timeout = services.settings.readiness_timeout_seconds
    gone = await missing(services.readiness, timeout)
    if gone:
        message = f"not answering: {', '.join(gone)}"
        if await refuses_password(services.settings, timeout):
            message += "; FalkorDB refused the password: check RELAY_FALKORDB_PASSWORD"
        return JSONResponse(
            {"status": "not_ready", "missing": gone,
             "error": {"code": "not_ready", "message": message}},
            status_code=503, headers={"Retry-After": "1"},
        )
    return JSONResponse({"status": "ready", "missing": []})
