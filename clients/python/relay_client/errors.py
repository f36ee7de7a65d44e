"""Typed errors for the API's error answers (`{"error": {"code", "message"}}`).

The class follows the HTTP status; a few codes that callers act on have their own subclass
(`AmbiguousName`, `UnknownPredicate`). Every error keeps the status, the code, the message and
the whole body, so nothing the server said is lost."""

from __future__ import annotations

from typing import Any


class RelayError(Exception):
    """Any error answer from Relay, or a request that never got one (`status` 0)."""

    def __init__(self, status: int, code: str, message: str, body: Any = None) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.body = status, code, message, body


class InvalidRequest(RelayError):
    """400 or 422: the request was refused as it stands; nothing was written."""


class UnknownPredicate(InvalidRequest):
    """422 `unknown_predicate`: the tenant has not registered this predicate."""


class Unauthorized(RelayError):
    """401: no key, or a key Relay does not know."""


class Forbidden(RelayError):
    """403: the key is valid but not for this tenant or this operation."""


class NotFound(RelayError):
    """404."""


class Conflict(RelayError):
    """409: the request conflicts with the state on file (it exists, a key is in use, ...)."""


class AmbiguousName(Conflict):
    """409 `ambiguous`: a name that two or more customers hold; `candidates` lists them."""

    @property
    def candidates(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("candidates") or [])


class PayloadTooLarge(RelayError):
    """413: the body (or a batch) is over the limit."""


class RateLimited(RelayError):
    """429, still refused after the client's retries."""


class Unavailable(RelayError):
    """503 (still not ready after the retries), or no answer at all (status 0)."""


class ServerError(RelayError):
    """Any other 5xx."""


_BY_CODE: dict[str, type[RelayError]] = {"unknown_predicate": UnknownPredicate, "ambiguous": AmbiguousName}
_BY_STATUS: dict[int, type[RelayError]] = {400: InvalidRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound,
                                           409: Conflict, 413: PayloadTooLarge, 422: InvalidRequest,
                                           429: RateLimited, 503: Unavailable}


def from_answer(status: int, body: Any) -> RelayError:
    """The typed error for an error answer's status and body."""
    detail = body.get("error") if isinstance(body, dict) else None
    code = str(detail.get("code", "error")) if isinstance(detail, dict) else "error"
    message = str(detail.get("message", "")) if isinstance(detail, dict) else str(body)[:500]
    kind = _BY_CODE.get(code) or _BY_STATUS.get(status) or (ServerError if status >= 500 else RelayError)
    return kind(status, code, message, body)
