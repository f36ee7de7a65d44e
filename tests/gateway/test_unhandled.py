"""An error no handler takes: the JSON 500 `internal`, on a real uvicorn, and the client's
keep-alive connection carries its next request (uvicorn closes a connection whose answer had
started when the app raises on; the gateway's innermost middleware answers and raises no further)."""

from __future__ import annotations

import httpx
from fastapi.routing import APIRoute

from .helpers import assert_error
from .stream_helpers import served


def _connection(r: httpx.Response) -> object:
    return r.extensions["network_stream"]  # httpcore's: one per connection it opened


async def test_an_unhandled_error_is_a_json_500_and_the_connection_carries_the_next_request(app):
    async def boom() -> dict:
        raise RuntimeError("a bug the tests put here")

    # Only this test's app instance has the route (first, before the site's files).
    app.router.routes.insert(0, APIRoute("/test-only/boom", boom, methods=["GET"]))
    async with served(app) as where, httpx.AsyncClient(base_url=f"http://{where}") as client:
        first = await client.get("/test-only/boom")
        assert_error(first, 500, "internal")
        assert "RuntimeError" not in first.text and "a bug" not in first.text  # nothing of the inside leaks
        second = await client.get("/healthz")
        assert second.status_code == 200 and second.json() == {"status": "ok"}
        assert _connection(second) is _connection(first)  # the same keep-alive connection
        third = await client.get("/test-only/boom")
        assert third.status_code == 500 and _connection(third) is _connection(first)
