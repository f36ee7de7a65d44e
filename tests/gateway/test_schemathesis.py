"""Schemathesis over the gateway's own /openapi.json, against the real gateway process on the real
FalkorDB, once with each kind of credential: a tenant key, an agent key, the admin key and a
customer's site cookie. Every operation runs with every credential, in positive mode (what the
schema allows) and negative mode (what it does not), a bounded number of examples per operation
and a fixed seed. The operations a credential may use get every phase (examples, coverage,
fuzzing; the agent key, whose code paths past the key are the tenant key's, no coverage phase); the
others, which refuse it on one code path (401/403), two examples each.

No 5xx; every answer matches its documented status, content type and schema; every request the
schema allows is taken, or refused only where the state explains it (401/403 auth, 404 a thing
that is not there, 409 a state that forbids it, or one of the 422 codes of
schemathesis_hooks.SEMANTIC_422: a value a predicate's own check refuses, a place nobody knows;
never 429: the limits are lifted for this run); every request it does not allow is refused with a
4xx. Each run prints its counts (requests, 5xx, answers off the schema)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from services.gateway.customer_sessions import COOKIE

MAX_EXAMPLES = int(os.environ.get("RELAY_SCHEMATHESIS_EXAMPLES", "3"))
OTHERS_MAX_EXAMPLES = 2  # an operation that refuses the credential: its refusal is one code path
SEED = 1
REPO = Path(__file__).resolve().parents[2]
TICKET = "T-FUZZ-1"  # the customer's ticket: ticket routes answer more than 404 with it

# The operations each credential may use (path regexes of the OpenAPI's paths). The health, the
# AsyncAPI document and the site's Judge mode take no credential: the tenant key's run covers them.
OWN = {
    "tenant": r"^/(healthz|readyz|asyncapi\.json|v1/site/.*|v1/tenants/\{t\}/(?!me(/|$)).*|v1/console/.*)$",
    "agent": r"^/v1/(tenants/\{t\}/(?!me(/|$)).*|console/.*)$",
    "admin": r"^/v1/(tenants|tenants/\{t\}/limits|admin/.*|console/.*)$",
    "customer": r"^/v1/tenants/\{t\}/me(/.*)?$",
}

CONFIG = """
[parameters]
"path.t" = "{tenant}"
"path.tenant" = "{victim}"
# without the desk agents no reply comes: a wait would only spend the run's time
"query.wait" = 0
{pinned}

[checks.not_a_server_error]
expected-statuses = ["2XX", "4XX"]

# A body over the gateway's size limit (RELAY_MAX_BODY_BYTES) is refused with 413 before it is read,
# whatever else is wrong with it: that is a rejection too.
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]

[[operations]]
include-path-regex = '^(?!{own})'
phases.coverage.enabled = false
generation.max-examples = {others}
"""


class Credentials:
    def __init__(self, tenant: str, victim: str, headers: dict[str, dict[str, str]]):
        self.tenant, self.victim, self.headers = tenant, victim, headers


def _open_ticket(graph_settings, tenant: str, customer: str) -> None:
    from relay_graph.desk.tickets import store as tickets
    from relay_graph.runtime.db import GraphClient

    async def run() -> None:
        client = GraphClient(graph_settings)
        try:
            await tickets.open_ticket(client, tenant, customer=customer, issue_kind="no internet",
                                      summary="no internet since the storm", agent="intake", ticket_id=TICKET)
        finally:
            await client.close()

    asyncio.run(run())


@pytest.fixture(scope="module")
def credentials(running_gateway, graph_settings) -> Credentials:
    """A tenant with its key, an agent key, an open site with one customer's session (and a ticket of
    theirs), and a second tenant for the admin's `{tenant}` routes (reset, delete, snapshots)."""
    url, admin = running_gateway.url, {"Authorization": f"Bearer {running_gateway.admin_key}"}
    tenant, victim = (f"st-{uuid.uuid4().hex[:10]}" for _ in range(2))
    keys = {}
    for name in (tenant, victim):
        r = httpx.post(f"{url}/v1/tenants", json={"tenant": name}, headers=admin, timeout=120)
        assert r.status_code == 201, r.text
        keys[name] = {"Authorization": f"Bearer {r.json()['api_key']}"}
    r = httpx.post(f"{url}/v1/tenants/{tenant}/agents", json={"agent": "fuzzer"}, headers=keys[tenant], timeout=60)
    assert r.status_code == 201, r.text
    agent = {"Authorization": f"Bearer {r.json()['api_key']}"}
    r = httpx.put(f"{url}/v1/tenants/{tenant}/site", json={"open": True}, headers=keys[tenant], timeout=60)
    assert r.status_code == 200, r.text
    r = httpx.post(f"{url}/v1/tenants/{tenant}/me/session", timeout=60)
    assert r.status_code == 201, r.text
    _open_ticket(graph_settings, tenant, r.json()["customer"])
    customer = {"Cookie": f"{COOKIE}={r.cookies[COOKIE]}"}
    return Credentials(tenant, victim, {"tenant": keys[tenant], "agent": agent, "admin": admin, "customer": customer})


@pytest.fixture(scope="module")
def totals(request):
    """The runs' counts, summed and printed when the module's runs are done."""
    counts: dict[str, int] = {"requests": 0, "5xx": 0, "schema_failures": 0}
    yield counts
    _say(request, f"schemathesis, all credentials: {_line(counts)}")


# Failure codes of answers that are not what the OpenAPI says: an undocumented status (ST103), a
# missing or undocumented content type (ST104-ST106), a missing header (ST107), a body or header
# its schema refuses (ST108), a body that does not parse (ST109, ST110), a discriminator (ST111).
OFF_SCHEMA = {f"ST1{n:02d}" for n in range(3, 12)}


def _off_schema(report: Path) -> int:
    """How many test cases failed a conformance check, from the CLI's JSON report."""
    failures = json.loads(report.read_text())["failures"] if report.exists() else []
    return sum(f.get("count", 1) for f in failures if f.get("code") in OFF_SCHEMA)


def _line(counts: dict[str, int]) -> str:
    return f"{counts['requests']} requests, {counts['5xx']} 5xx, {counts['schema_failures']} answers off the schema"


def _say(request, text: str) -> None:
    # Printed past pytest's capture, so the figures are in the output of a passing run too.
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is None:
        print(text)
        return
    with capture.global_and_fixture_disabled():
        print(f"\n{text}", flush=True)


# Admin last: it resets and deletes (the second tenant) and sets limits.
@pytest.mark.parametrize("who", ["tenant", "agent", "customer", "admin"])
def test_the_gateway_keeps_its_openapi(running_gateway, credentials, totals, tmp_path, request, who):
    config = tmp_path / "schemathesis.toml"
    # The tenant key's and the customer's runs use the customer's real ticket, so its routes answer
    # 200 too; the others draw ticket ids like any other value.
    pinned = f'"path.id" = "{TICKET}"' if who in ("tenant", "customer") else ""
    config.write_text(CONFIG.format(tenant=credentials.tenant, victim=credentials.victim, pinned=pinned,
                                    own=OWN[who].removeprefix("^"), others=OTHERS_MAX_EXAMPLES))
    counts_file = tmp_path / "counts.json"
    # An agent key takes the tenant key's code paths past the key itself: the tenant key's run has
    # walked their boundaries (the coverage phase), this one fuzzes them with more examples.
    phases = "examples,fuzzing" if who == "agent" else "examples,coverage,fuzzing"
    examples = MAX_EXAMPLES * 3 if who == "agent" else MAX_EXAMPLES  # fuzzing is all it has
    cmd = [str(Path(sys.executable).with_name("st")), "--config-file", str(config), "--no-color", "run",
           f"{running_gateway.url}/openapi.json", "--mode", "all", "--max-examples", str(examples),
           "--seed", str(SEED), "--workers", "1", "--phases", phases,
           "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
           "response_schema_conformance,relay_positive_acceptance,negative_data_rejection",
           *[a for k, v in credentials.headers[who].items() for a in ("-H", f"{k}: {v}")],
           "--generation-database", "none", "--request-timeout", "60",
           "--report", "json", "--report-json-path", str(tmp_path / "report.json")]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.gateway.schemathesis_hooks", "PYTHONPATH": str(REPO),
           "RELAY_ST_COUNTS": str(counts_file)}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=REPO, env=env)
    counts = json.loads(counts_file.read_text()) if counts_file.exists() else {}
    if counts:
        counts["schema_failures"] = _off_schema(tmp_path / "report.json")
    for k in totals:
        totals[k] += counts.get(k, 0)
    _say(request, f"schemathesis with the {who} credential: {_line(counts) if counts else 'no counts'}")
    report = run.stdout[-20_000:] + run.stderr[-5_000:]
    assert run.returncode == 0, report
    assert counts["requests"] > 0 and counts["5xx"] == 0 and counts["schema_failures"] == 0, counts
