"""The notifications on the streams, described as an AsyncAPI 3.0 document."""

from __future__ import annotations

from functools import lru_cache

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from relay_graph.streams import asyncapi_document

router = APIRouter(tags=["health"])


@lru_cache(maxsize=1)
def _document() -> dict:
    return asyncapi_document()


@router.get("/asyncapi.json", summary="AsyncAPI 3.0 description of the change notifications on the streams",
            description="The thin notifications the gateway and the agents exchange through Redis Streams "
            "(what the live feed is made of): channels, message schemas, trace headers, dead letters.")
async def asyncapi() -> JSONResponse:
    return JSONResponse(_document())
