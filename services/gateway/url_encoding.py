"""Refuses a URL whose query string or path is not UTF-8 once its %-escapes are decoded.

Starlette and uvicorn decode both with `errors="replace"`: `?subject=%FF` would reach a route as
`"\ufffd"`, a name nobody wrote, looked up or even stored. The contract is UTF-8 in and out, so such
a request is answered 400 `invalid_encoding` before any route sees it."""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Receive, Scope, Send

from .errors import error_response


def _not_utf8(raw: bytes, plus_is_space: bool) -> str | None:
    """Why `raw` (as sent, %-escaped) is not UTF-8 text, or None when it is."""
    try:
        unquote_to_bytes(raw.replace(b"+", b" ") if plus_is_space else raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        return f"byte 0x{exc.object[exc.start]:02X} at {exc.start} (after %-decoding) is not UTF-8"
    return None


class Utf8Url:
    """ASGI middleware: 400 `invalid_encoding` for a query string or a path that is not UTF-8."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            for part, raw, plus in (("query string", scope.get("query_string", b""), True),
                                    ("path", scope.get("raw_path") or b"", False)):
                if raw and (why := _not_utf8(raw, plus)):
                    response = error_response(400, "invalid_encoding", f"the {part} is not UTF-8: {why}; "
                                              "percent-encode the UTF-8 bytes of the text")
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)
