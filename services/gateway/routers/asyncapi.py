"""The notifications on the streams, described as an AsyncAPI 3.0 document (FastStream's, from the
agents' apps: services/asyncapi.py)."""

from __future__ import annotations

from functools import lru_cache

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from services.asyncapi import document

router = APIRouter(tags=["health"])


@lru_cache(maxsize=4)
def _document(host: str, port: int) -> dict:
    from relay_graph.runtime.config import GraphSettings

    return document(GraphSettings(falkordb_host=host, falkordb_port=port))


# The body is an AsyncAPI document (its schema is AsyncAPI's own), not one of the API's models.
@router.get("/asyncapi.json", response_class=JSONResponse, summary="AsyncAPI 3.0 description of the change notifications on the streams",
            description="The thin notifications the gateway and the agents exchange through Redis Streams "
            "(what the live feed is made of): channels, message schemas, trace headers, dead letters.")
async def asyncapi(request: Request) -> JSONResponse:
    settings = request.app.state.deps.settings
    return JSONResponse(_document(settings.falkordb_host, settings.falkordb_port))
