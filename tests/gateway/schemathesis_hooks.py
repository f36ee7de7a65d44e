"""Schemathesis hooks for tests/gateway/test_schemathesis.py (loaded with SCHEMATHESIS_HOOKS).

The counts of a run's requests and 5xx answers go to the JSON file RELAY_ST_COUNTS names when the
run ends, for the test to print (the CLI's JSON report has the failures, not the requests).

The API's times are `format: date-time` with a pattern for the years 1900-2199
(relay_graph.memory.inputs); the default date-time strategy draws any year and would have nearly all its
draws filtered out by the pattern. This draws date-times inside the range, with any offset, so
positive mode spends its examples on the API."""

from __future__ import annotations

import atexit
import json
import os
from collections import Counter
from datetime import datetime, timedelta, timezone

import schemathesis
from hypothesis import strategies as st

from relay_graph.memory.inputs import TIME_MAX_YEAR, TIME_MIN_YEAR

_OFFSETS = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: timezone(timedelta(minutes=m)))

schemathesis.openapi.format("date-time", st.datetimes(
    min_value=datetime(TIME_MIN_YEAR, 1, 1), max_value=datetime(TIME_MAX_YEAR, 12, 31, 23, 59, 59),
    timezones=_OFFSETS).map(lambda d: d.isoformat()))


# 422 codes a request the schema allows may still get, because what decides them is not a shape:
# a predicate's own check of a value (a phone number that is not one; a customer name whose
# normal form is empty, such as "!!!"), a place the gazetteer does not know, a fault the target
# cannot suffer in its current state; an Idempotency-Key the generator sent before with another
# body (a key is one request's, whatever the schema allows); a predicate name the tenant's
# vocabulary does not have (a pattern in the schema: a tenant defines its own at run time), or one
# whose mirror edge would be a relationship the graph uses for something else; a page cursor the
# API never gave (the schema states only its alphabet); a `confirm` that is not the tenant of the
# path (a reset or a delete goes ahead only with it).
SEMANTIC_422 = frozenset({"invalid_value", "unknown_place", "ambiguous_address", "no_line_there",
                          "fault_not_applicable", "idempotency_key_reused", "unknown_predicate",
                          "reserved_predicate_name", "invalid_cursor", "confirmation_required"})


@schemathesis.check
def relay_positive_acceptance(ctx, response, case):
    """Positive mode: what the schema allows is taken, or refused only where the state explains it
    (401/403 auth, 404 not there, 409 state) or with one of SEMANTIC_422."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    status = response.status_code
    if 200 <= status < 300 or status in (401, 403, 404, 405, 409):
        return None
    try:
        code = response.json()["error"]["code"]
    except Exception:  # noqa: BLE001 - not our error shape: reported below
        code = None
    if status == 422 and code in SEMANTIC_422:
        return None
    raise AssertionError(f"a request the schema allows was refused: {status} {code}: {response.text[:500]}")


COUNTS: Counter[str] = Counter()


@schemathesis.hook
def after_call(ctx, case, response):
    COUNTS["requests"] += 1
    if response.status_code >= 500:
        COUNTS["5xx"] += 1


@atexit.register
def _write_counts() -> None:
    if path := os.environ.get("RELAY_ST_COUNTS"):
        with open(path, "w") as f:
            json.dump({k: COUNTS[k] for k in ("requests", "5xx")}, f)
