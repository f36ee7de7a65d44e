"""Every failure leaves the gateway as `{"error": {"code", "message"}}` with the right status.

The engine's typed errors (relay_graph.runtime.errors) carry their own code and status; the gateway adds
the few that only exist at HTTP (auth, limits) as subclasses of the same hierarchy, so one handler
answers them all."""

from __future__ import annotations

import logging
from typing import Any

import redis.exceptions
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from relay_graph.memory.models import Candidate
from relay_graph.runtime.errors import AmbiguousName, RelayError

log = logging.getLogger("relay.gateway")


class Unauthorized(RelayError):
    code = "unauthorized"
    status = 401


class Forbidden(RelayError):
    code = "forbidden"
    status = 403


class PayloadTooLarge(RelayError):
    code = "payload_too_large"
    status = 413


class RateLimited(RelayError):
    code = "rate_limited"
    status = 429

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NotReady(RelayError):
    code = "not_ready"
    status = 503


class ErrorDetail(BaseModel):
    code: str
    message: str


class ErrorBody(BaseModel):
    """The shape of every error answer."""

    error: ErrorDetail
    candidates: list[Candidate] | None = Field(default=None, description="409 `ambiguous`: the customers "
                                               "who hold the name a write gave; write by one's id")


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None,
                   **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}, **extra}, status_code=status, headers=headers)


# Documented on every route that can give them (OpenAPI `responses=`).
def responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    return {s: {"model": ErrorBody} for s in statuses}


async def relay_error(request: Request, exc: RelayError) -> JSONResponse:
    headers: dict[str, str] = {}
    if isinstance(exc, Unauthorized):
        headers["WWW-Authenticate"] = "Bearer"
    if (retry_after := getattr(exc, "retry_after", None)) is not None:  # a rate limit, a key in use, a 503
        headers["Retry-After"] = str(retry_after)
    extra = {"candidates": exc.candidates} if isinstance(exc, AmbiguousName) else {}
    return error_response(exc.status, exc.code, exc.message, headers or None, **extra)


def _where(loc: tuple | list) -> str:
    parts = [str(p) for p in loc]
    # "body.episodes.0.at" reads better than "('body', 'episodes', 0, 'at')"; the bare "body" prefix
    # of a whole-body error says nothing.
    return ".".join(parts) if parts else "request"


def validation_message(errors: list[dict[str, Any]]) -> str:
    # "Value error, " is pydantic's prefix for what our own checks (relay_graph.memory.inputs) said
    shown = [f"{_where(e.get('loc', ()))}: {str(e.get('msg', 'invalid')).removeprefix('Value error, ')}"
             for e in errors[:10]]
    more = f" (and {len(errors) - 10} more)" if len(errors) > 10 else ""
    return "; ".join(shown) + more


async def request_validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = list(exc.errors())
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(400, "invalid_json", "the request body is not valid JSON")
    details = [{"loc": [str(p) for p in e.get("loc", ())], "msg": e.get("msg"), "type": e.get("type")}
               for e in errors]
    return error_response(422, "validation_error", validation_message(errors), details=details)


async def model_validation_error(request: Request, exc: ValidationError) -> JSONResponse:
    # A model built after the request was parsed (an engine input) refused a value.
    errors = list(exc.errors())
    return error_response(422, "validation_error", validation_message(errors))


_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "unavailable",
}


def _allowed_methods(request: Request) -> list[str]:
    # Starlette's 405 names the methods of the first route on the path; a path served by two routes
    # (GET and POST of .../agents) allows the methods of both.
    methods: set[str] = set()
    for route in iter_route_contexts(request.app.router.routes):  # the included routers' routes, flat
        if (found := route.methods) and route.matches(request.scope)[0] != Match.NONE:
            methods |= found
    return sorted(methods)


async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    if exc.status_code == 400 and isinstance(exc.__cause__, RecursionError):
        # FastAPI's parser gave up on a body nested deeper than Python's JSON reader goes
        return error_response(400, "invalid_json", "the request body is not JSON this service reads: it is nested "
                                                   "too deeply")
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    headers = dict(exc.headers) if exc.headers else {}
    if exc.status_code == 404:
        message = f"no route {request.method} {request.url.path}; see /docs for the API"
    elif exc.status_code == 405:
        allowed = _allowed_methods(request) or headers.get("Allow", "").split(", ")
        headers["Allow"] = ", ".join(allowed)
        message = f"{request.method} is not allowed on {request.url.path}; it takes {', '.join(allowed)}"
    else:
        message = str(exc.detail)
    return error_response(exc.status_code, code, message, headers or None)


async def store_unavailable(request: Request, exc: Exception) -> JSONResponse:
    log.warning("FalkorDB unavailable: %s", exc)
    return error_response(503, "unavailable", "the graph store is not answering; retry shortly",
                          {"Retry-After": "1"})


async def unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal", "something went wrong on our side; it was logged")


class Unhandled:
    """The innermost middleware: an exception no handler took is answered here with the JSON 500,
    and goes no further. Starlette's own last resort (ServerErrorMiddleware, outside every
    middleware) answers it too, but then raises it on to the server, and uvicorn closes a connection
    whose answer had started: the client's next request on that keep-alive connection was reset.
    Inside the other middlewares, they see an ordinary 500 answer (traced, counted)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watch(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except Exception as exc:
            if started:  # half an answer went out: only closing the connection can end it
                raise
            await (await unexpected(Request(scope), exc))(scope, receive, send)


def document_invalid_json(schema: dict[str, Any]) -> dict[str, Any]:
    """Adds the 400 `invalid_json` answer to every operation that takes a body (FastAPI documents
    only the 422 of a body that parsed)."""
    for ops in schema.get("paths", {}).values():
        for op in ops.values():
            if isinstance(op, dict) and "requestBody" in op:
                op["responses"].setdefault("400", {
                    "description": "`invalid_json`: the body is not valid JSON",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}})
    return schema


def install(app: FastAPI) -> None:
    app.add_exception_handler(RelayError, relay_error)
    app.add_exception_handler(RequestValidationError, request_validation_error)
    app.add_exception_handler(ValidationError, model_validation_error)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(redis.exceptions.ConnectionError, store_unavailable)
    app.add_exception_handler(redis.exceptions.TimeoutError, store_unavailable)
    app.add_exception_handler(Exception, unexpected)
