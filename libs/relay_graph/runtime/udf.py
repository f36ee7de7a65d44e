"""Relay's wording as FalkorDB functions (`GRAPH.UDF`, JavaScript, FalkorDB 4.22+): `relay.sentence`,
`relay.money` and `relay.ago`, so a read can return a fact or a price already worded, the same
words the Python side writes.

The library is generated from the Python constants it mirrors (currency symbols, whole-unit
currencies), so the two cannot drift apart on data; the tests hold the two wordings side by side.
Every process loads it before its first query (`GraphClient.ensure_udfs`, `GRAPH.UDF LOAD
REPLACE`: idempotent, so processes starting together do not conflict). Both modules Relay can run
(4.22.1, and 4.16.3 kept for comparisons) have `GRAPH.UDF`.
"""

from __future__ import annotations

import json

from relay_graph.runtime.currencies import SYMBOLS, ZERO_DECIMAL

LIBRARY = "relay"

_SOURCE = """
const SYMBOLS = __SYMBOLS__;
const ZERO_DECIMAL = new Set(__ZERO__);

function pad(n, w) { return String(n).padStart(w, '0'); }

// As Python's datetime.isoformat() writes a UTC time: microseconds only when there are any.
function iso(ms) {
  const d = new Date(ms);
  let s = d.getUTCFullYear() + '-' + pad(d.getUTCMonth() + 1, 2) + '-' + pad(d.getUTCDate(), 2) + 'T' +
          pad(d.getUTCHours(), 2) + ':' + pad(d.getUTCMinutes(), 2) + ':' + pad(d.getUTCSeconds(), 2);
  const frac = d.getUTCMilliseconds();
  if (frac) { s += '.' + pad(frac * 1000, 6); }
  return s + '+00:00';
}

function sentence(subject, predicate, object, validFromMs, assertedBy) {
  const since = (validFromMs === null || validFromMs === undefined) ? '' : ' since ' + iso(validFromMs);
  return subject + ' ' + predicate.split('_').join(' ') + ' ' + object + since + ' (on file from ' + assertedBy + ')';
}

// toFixed, but an exact tie goes to the even digit, as Python's format() does ("0" for 0.5, not
// "1"). At 0 decimals a tie is 2x odd; at 2 decimals it is 8x odd (only m/8 is exactly n + 0.5 cents).
function toFixedEven(x, dp) {
  const k = dp === 0 ? 2 : 8;
  const scaled = x * k;
  if (!Number.isInteger(scaled) || scaled % 2 === 0) { return x.toFixed(dp); }
  const unit = Math.pow(10, dp);
  const n = Math.floor(x * unit);
  return ((n % 2 === 0 ? n : n + 1) / unit).toFixed(dp);
}

function money(amount, currency) {
  let dp = ZERO_DECIMAL.has(currency) ? 0 : 2;
  if (dp && amount >= 100 && Number.isInteger(amount)) { dp = 0; }
  const fixed = toFixedEven(Math.abs(amount), dp);
  const dot = fixed.indexOf('.');
  const whole = dot < 0 ? fixed : fixed.slice(0, dot);
  const grouped = whole.replace(/\\B(?=(\\d{3})+(?!\\d))/g, ',') + (dot < 0 ? '' : fixed.slice(dot));
  const symbol = Object.prototype.hasOwnProperty.call(SYMBOLS, currency) ? SYMBOLS[currency] : currency + ' ';
  return symbol + (amount < 0 ? '-' : '') + grouped;
}

function ago(ms, nowMs) {
  const s = Math.floor((nowMs - ms) / 1000);
  if (s < 60) { return 'just now'; }
  const units = [[86400, 'day'], [3600, 'hour'], [60, 'minute']];
  for (const [size, name] of units) {
    if (s >= size) {
      const n = Math.floor(s / size);
      return n + ' ' + name + (n === 1 ? '' : 's') + ' ago';
    }
  }
}

falkor.register('sentence', sentence);
falkor.register('money', money);
falkor.register('ago', ago);
"""


def source() -> str:
    """The library's JavaScript, with the Python constants it mirrors filled in."""
    return (_SOURCE.replace("__SYMBOLS__", json.dumps(SYMBOLS, ensure_ascii=False, sort_keys=True))
            .replace("__ZERO__", json.dumps(sorted(ZERO_DECIMAL))))


def load_command() -> tuple[str, ...]:
    return ("GRAPH.UDF", "LOAD", "REPLACE", LIBRARY, source())


LIST_COMMAND = ("GRAPH.UDF", "LIST", "WITHCODE")


def loaded(listing: object) -> bool:
    """Whether `GRAPH.UDF LIST WITHCODE` shows this very library already loaded. A process then
    loads nothing: replacing a library while other clients' queries run crashed FalkorDB 4.22.1
    (UDF_RepoRemoveLib racing UDF_RepoPopulateJSContext, seen once in a full test run)."""
    want = source()
    for entry in listing if isinstance(listing, list) else []:
        if not isinstance(entry, dict):
            continue
        fields = {(k.decode() if isinstance(k, bytes) else k): v for k, v in entry.items()}
        name, code = fields.get("library_name"), fields.get("library_code")
        name = name.decode() if isinstance(name, bytes) else name
        code = code.decode() if isinstance(code, bytes) else code
        if name == LIBRARY and code == want:
            return True
    return False


def ago(ms: int, now_ms: int) -> str:
    """"just now", "1 minute ago", "3 hours ago", "12 days ago": how long before `now_ms`."""
    s = (now_ms - ms) // 1000
    if s < 60:
        return "just now"
    for size, name in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if s >= size:
            n = s // size
            return f"{n} {name}{'' if n == 1 else 's'} ago"
    raise AssertionError("unreachable")
