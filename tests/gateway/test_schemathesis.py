"""Schemathesis over the gateway's own /openapi.json, against the real gateway process on the real
FalkorDB: in positive mode (what the schema allows) and negative mode (what it does not), a
bounded number of examples per operation. No 5xx; every request the schema allows is taken, or
refused only where the state explains it (401/403 auth, 404 a thing that is not there, 409 a
state that forbids it, or one of the 422 codes of schemathesis_hooks.SEMANTIC_422: a value a
predicate's own check refuses, a place nobody knows; never 429: the limit is lifted for this run);
every request it does not allow is refused with a 4xx; every answer matches its documented
schema."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx
import pytest

MAX_EXAMPLES = int(os.environ.get("RELAY_SCHEMATHESIS_EXAMPLES", "6"))
# Operations that need a seeded world or the desk agents to answer more than 404/409 (the lab,
# the network) still run: their 404/409 are the state explaining itself. MCP is not a plain
# request/response operation.
EXCLUDE_PATHS = ["/mcp"]
REPO = Path(__file__).resolve().parents[2]

CONFIG = """
[parameters]
"path.t" = "{tenant}"
# without the desk agents no reply comes: a wait would only spend the run's time
"query.wait" = 0

[checks.not_a_server_error]
expected-statuses = ["2XX", "4XX"]

# A body over the gateway's size limit (RELAY_MAX_BODY_BYTES) is refused with 413 before it is read,
# whatever else is wrong with it: that is a rejection too.
[checks.negative_data_rejection]
expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429"]
"""


@pytest.fixture(scope="module")
def tenant_key(running_gateway) -> tuple[str, str]:
    tenant = f"st-{uuid.uuid4().hex[:10]}"
    r = httpx.post(f"{running_gateway.url}/v1/tenants", json={"tenant": tenant},
                   headers={"Authorization": f"Bearer {running_gateway.admin_key}"}, timeout=120)
    assert r.status_code == 201, r.text
    return tenant, r.json()["api_key"]


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_the_gateway_keeps_its_openapi(running_gateway, tenant_key, tmp_path, mode):
    tenant, key = tenant_key
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG.replace("{tenant}", tenant))
    cmd = [str(Path(sys.executable).with_name("st")), "--config-file", str(config), "--no-color", "run",
           f"{running_gateway.url}/openapi.json", "--mode", mode, "--max-examples", str(MAX_EXAMPLES),
           "--seed", "1", "--workers", "1", "--phases", "examples,coverage,fuzzing",
           "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,"
           "response_schema_conformance," + ("relay_positive_acceptance" if mode == "positive"
                                              else "negative_data_rejection"),
           "-H", f"Authorization: Bearer {key}", "--generation-database", "none",
           "--request-timeout", "60", *[a for p in EXCLUDE_PATHS for a in ("--exclude-path", p)]]
    env = {**os.environ, "SCHEMATHESIS_HOOKS": "tests.gateway.schemathesis_hooks", "PYTHONPATH": str(REPO)}
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=REPO, env=env)
    report = run.stdout[-20_000:] + run.stderr[-5_000:]
    assert run.returncode == 0, report
