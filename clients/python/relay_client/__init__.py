"""relay-client: Python client for Relay, shared time-aware graph memory for teams of AI agents.

    from relay_client import Admin
    admin = Admin()                                   # RELAY_URL, RELAY_ADMIN_KEY
    acme = admin.tenant("acme", admin.create_tenant("acme").api_key)
    acme.remember("asha rao", "lives_in", "pune")
    acme.recall("where does asha live?")
"""

from .client import Admin, AsyncAdmin, AsyncRelay, Relay
from .errors import (AmbiguousName, Conflict, Forbidden, InvalidRequest, NotFound, PayloadTooLarge, RateLimited,
                     RelayError, ServerError, Unauthorized, Unavailable, UnknownPredicate)
from .models import Turn

__all__ = ["Admin", "AsyncAdmin", "AsyncRelay", "Relay", "Turn", "AmbiguousName", "Conflict", "Forbidden",
           "InvalidRequest", "NotFound", "PayloadTooLarge", "RateLimited", "RelayError", "ServerError",
           "Unauthorized", "Unavailable", "UnknownPredicate"]
