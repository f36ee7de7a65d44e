"""Typed errors of the memory engine. Each carries a snake_case code and an HTTP status so the
gateway can answer `{"error": {"code", "message"}}` without guessing."""

from __future__ import annotations


class RelayError(Exception):
    code = "relay_error"
    status = 400

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class InvalidInput(RelayError):
    code = "invalid_input"
    status = 422


class InvalidTenant(InvalidInput):
    code = "invalid_tenant"


class UnknownPredicate(InvalidInput):
    code = "unknown_predicate"


class InvalidValue(InvalidInput):
    code = "invalid_value"


class NotFound(RelayError):
    code = "not_found"
    status = 404


class TenantNotFound(NotFound):
    """The tenant is not registered (never created, or deleted): nothing touches its graph."""

    code = "tenant_not_found"


class AlreadyExists(RelayError):
    code = "already_exists"
    status = 409


class StateConflict(RelayError):
    """The graph changed under us more often than we are willing to retry."""

    code = "state_conflict"
    status = 409


class AmbiguousName(RelayError):
    """A write by a name that two or more customers hold: nothing is written; `candidates` lists them
    ({"id", "name"}) so the writer can send the one it means by id."""

    code = "ambiguous"
    status = 409

    def __init__(self, message: str, candidates: list[dict[str, str]]) -> None:
        super().__init__(message)
        self.candidates = candidates


class Unavailable(RelayError):
    code = "unavailable"
    status = 503
