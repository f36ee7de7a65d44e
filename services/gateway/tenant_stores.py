"""The gateway's stores that keep something per tenant, each declaring it to
relay_graph.runtime.tenant_data when imported: whoever deletes a tenant outside the gateway process
(`relay admin delete`) imports this module first, so nothing of the gateway's is left behind."""

from __future__ import annotations

from . import auth, customer_sessions, idempotency, judge_tenants, limits  # noqa: F401 (they declare)
