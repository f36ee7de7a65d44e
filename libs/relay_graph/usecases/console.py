"""What the staff console reads that no other route gives: the tenant's graph as nodes and edges
coloured by band, the open conflicts, the indexes, the knowledge flowing between agents (from
CONSULTED edges), the queries every process ran (the shared query log), the plan of any named
statement and the profile of a logged read.

The graph is the whole tenant's picture (bounded by `limit`), with each node's times on both
clocks, so the page's replay bar scrubs without asking again; what a subject's facts were at an
instant is the engine's own as-of read (GET /facts?as_of=&clock=)."""

from __future__ import annotations

import importlib
import math
import pkgutil
import re
from functools import cache
from typing import Literal

from pydantic import BaseModel, Field

from relay_graph.desk import queries as desk_queries
from relay_graph.desk.tickets import store as tickets
from relay_graph.lab import queries as lab_queries
from relay_graph.memory import names
from relay_graph.memory import queries as memory_queries
from relay_graph.runtime import queries as runtime_queries
from relay_graph.usecases import queries as usecase_queries
from relay_graph.runtime import query_log
from relay_graph.runtime.errors import InvalidInput, NotFound
from relay_graph.runtime.queries import Query
from relay_graph.runtime.times import now_ms
from relay_graph.usecases.queries import console as q
from relay_graph.usecases import console_groups as groups
from relay_graph.usecases.context import Call

Band = Literal["episodic", "semantic", "disagreement", "procedural", "network"]
BANDS: tuple[str, ...] = ("episodic", "semantic", "disagreement", "procedural", "network")

# A node's band by its most specific label: the first band (in this order) one of its labels is in;
# everything else (an Entity of any registry type, a Fact) is semantic.
_BAND_OF_LABEL: tuple[tuple[str, frozenset[str]], ...] = (
    ("disagreement", frozenset({"Conflict", "Trust", "Agent"})),
    ("procedural", frozenset({"Procedure", "ProcStep", "Ticket", "TicketEvent", "Issue", "TechVisit",
                              "Technician", "CaseMove"})),
    ("network", frozenset({"NetNode", "Olt", "Splitter", "Pop", "Backbone", "Ont", "Outage", "Area", "City",
                           "Country", "Region", "Plan", "Offer", "AddOn", "Faq", "Playbook", "Community"})),
    ("episodic", frozenset({"Episode", "Session", "Speaker", "CustomerMessage", "AgentReply", "ToolResult",
                            "InternalNote", "Message"})),
)
# Edges by type; an edge of any other type takes its source node's band.
_BAND_OF_EDGE: dict[str, str] = {
    **dict.fromkeys(("WROTE", "IN", "HAS_SESSION", "FOLLOWED_BY", "MENTIONS", "SPOKEN_BY", "NAMED", "PHRASED_AS"),
                    "episodic"),
    **dict.fromkeys(("DERIVED", "RETIRED", "ABOUT", "WRITTEN_BY", "SUPERSEDES", "WAS", "NAMES"), "semantic"),
    **dict.fromkeys(("BETWEEN", "SETTLED_FOR", "HAS_TRUST", "CONSULTED"), "disagreement"),
    **dict.fromkeys(("HAS_TICKET", "TICKET_ABOUT", "TRIED_FIX", "FIXED_BY", "VISITS", "FOR_TICKET", "FIRST", "NEXT",
                     "HAS_EVENT", "HANDED_OFF", "PICKED_UP", "OPENED", "CASE_MOVED", "CASE_ARRIVED"), "procedural"),
    **dict.fromkeys(("CONNECTED_VIA", "PON", "UPLINK", "DROP", "AFFECTS", "IN_CITY", "IN_COUNTRY", "IN_REGION",
                     "IN_COMMUNITY", "PRICED_IN", "CAUSED_BY", "ON", "OPENED_IN"), "network"),
}

MAX_LIMIT = 50_000


def band_of(labels: list[str]) -> str:
    have = set(labels)
    for band, names in _BAND_OF_LABEL:
        if have & names:
            return band
    return "semantic"


def kind_of(labels: list[str]) -> str:
    """The most specific label: an Entity's registry type (Customer, City) rather than Entity."""
    specific = [label for label in labels if label not in ("Entity", "Current", "Superseded", "Retired", "Claim",
                                                             "NetNode", "Up")]
    return specific[0] if specific else (labels[0] if labels else "Node")


class GraphNode(BaseModel):
    id: str = Field(description="its domain id (a fact_id, episode_id, entity uid, ...), else `n` and its graph id")
    kind: str = Field(description="its most specific label, e.g. Customer, Fact, Episode, Olt")
    labels: list[str]
    band: Band
    name: str
    predicate: str | None = None
    subject: str | None = None
    valid_from_ms: int | None = Field(default=None, description="world clock: true from (a fact)")
    valid_to_ms: int | None = None
    recorded_at_ms: int | None = Field(default=None, description="belief clock: on file from")
    expired_at_ms: int | None = None
    believed_from_ms: int | None = None
    at_ms: int | None = Field(default=None, description="an episode's time")
    group: str | None = Field(default=None, description="what the page folds it into in the whole view: a network "
                              "node's city, `Core` (the backbone), `Catalogue` (plans, offers, places); null: never folded")


class GraphEdge(BaseModel):
    source: str
    target: str
    type: str
    band: Band
    valid_from_ms: int | None = None
    valid_to_ms: int | None = None


class ConsoleGraph(BaseModel):
    tenant: str
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    truncated: bool = Field(description="the graph has more nodes or edges than the limit asked")
    bands: list[str] = Field(default=list(BANDS))
    focus: str | None = Field(default=None, description="the node a neighbourhood is about (a customer's)")


class OpenConflict(BaseModel):
    conflict_id: str
    subject: str | None
    subject_name: str | None
    predicate: str | None
    opened_at_ms: int | None


class OpenConflicts(BaseModel):
    conflicts: list[OpenConflict]


class IndexInfo(BaseModel):
    label: str
    properties: list[str]
    types: dict[str, list[str]] = Field(description="property -> index kinds (RANGE, FULLTEXT, VECTOR)")
    status: str


class Indexes(BaseModel):
    tenant: str
    indexes: list[IndexInfo]


class KnowledgeFlow(BaseModel):
    writer: str = Field(description="the agent that wrote the facts")
    reader: str = Field(description="the agent that CONSULTED them")
    facts: int = Field(description="how many of the writer's facts the reader consulted")
    reads: int = Field(description="how often, all told")
    last_ms: int | None


class KnowledgeFlows(BaseModel):
    flows: list[KnowledgeFlow] = Field(description="most-read pairs first; an agent reading its own facts is not a flow")


class Crossing(BaseModel):
    writer: str = Field(description="the agent that wrote the fact")
    reader: str = Field(description="the agent on the ticket that CONSULTED it while the ticket was open")
    fact_id: str
    predicate: str | None
    object: str | None
    current: bool = Field(description="the fact is still the current one")
    reads: int = Field(description="how often the reader consulted it, all told")
    first_ms: int | None
    last_ms: int | None


class TicketCrossings(BaseModel):
    ticket_id: str
    crossings: list[Crossing] = Field(description="newest read first; an agent reading its own facts is not a crossing")


class Expert(BaseModel):
    expert: str = Field(description="an agent, or `technician <name>`")
    tickets: int = Field(description="similar tickets they worked")
    fixed: int = Field(description="of those, fixed or closed")
    issues: list[str] = Field(description="the similar tickets' issues")
    why: list[str] = Field(description="how the tickets are similar: `same issue`, `shared fix` (a fix step in common)")
    last_ms: int | None
    ticket_ids: list[str] = Field(description="up to ten of the similar tickets")


class TicketExperts(BaseModel):
    ticket_id: str
    issue: str
    experts: list[Expert] = Field(description="most similar tickets fixed first, then worked")


class QueryPlan(BaseModel):
    query: str = Field(description="the named statement (queries/)")
    tenant: str
    cypher: str
    plan: list[str] = Field(description="GRAPH.EXPLAIN's operations, one a line, outermost first")


class LoggedQuery(BaseModel):
    id: str = Field(description="the run's entry in the tenant's shared query log (what PROFILE asks for)")
    query: str = Field(description="the named statement (queries/)")
    tenant: str
    process: str = Field(description="the process that ran it: gateway, intake, resolver, netops, ...")
    ok: bool
    rows: int
    ms: float
    at_ms: int
    read_only: bool
    profilable: bool = Field(description="a read-only run whose parameters were kept: PROFILE runs it again as it ran")
    kept_parameters: bool = Field(description="the log kept its parameters: EXPLAIN plans it with them")
    housekeeping: bool = Field(default=False, description="a poll every process runs on a timer (the outbox relay's)")


class LoggedQueries(BaseModel):
    queries: list[LoggedQuery] = Field(description="the last queries every process ran on this tenant, newest last")


class StatementSummary(BaseModel):
    query: str = Field(description="the named statement")
    processes: list[str] = Field(description="the processes that ran it")
    count: int
    errors: int
    p50_ms: float
    p95_ms: float
    max_ms: float
    housekeeping: bool
    slowest: LoggedQuery = Field(description="its slowest logged run: PROFILE it when `profilable`, else EXPLAIN")


class QuerySummary(BaseModel):
    runs: int = Field(description="the logged runs summarised")
    statements: list[StatementSummary] = Field(description="slowest p95 first")


class QueryProfile(BaseModel):
    id: str
    query: str
    tenant: str
    process: str
    cypher: str
    parameters: dict = Field(description="the parameters it ran with (kept by the log)")
    plan: list[str] = Field(description="GRAPH.PROFILE's operations with their records and times, outermost first")


def to_nodes(rows: list[dict], label) -> tuple[list[GraphNode], dict[int, str]]:
    """GraphNodes of GRAPH_NODES-shaped rows, named by `label(row)`, and graph id -> node id."""
    keys: dict[int, str] = {}
    taken: set[str] = set()
    nodes: list[GraphNode] = []
    for r in rows:
        labels = list(r["labels"] or [])
        key = str(r["key"]) if r["key"] is not None else f"n{r['id']}"
        if key in taken:  # a domain id shared by two nodes must not merge them
            key = f"n{r['id']}"
        taken.add(key)
        keys[r["id"]] = key
        nodes.append(GraphNode(id=key, kind=kind_of(labels), labels=labels, band=band_of(labels),
                               name=label(r), predicate=r["predicate"], subject=r["subject_uid"],
                               **{f: r[f] for f in ("valid_from_ms", "valid_to_ms", "recorded_at_ms",
                                                    "expired_at_ms", "believed_from_ms", "at_ms")}))
    return nodes, keys


def to_edges(rows: list[dict], keys: dict[int, str], nodes: list[GraphNode]) -> list[GraphEdge]:
    band = {n.id: n.band for n in nodes}
    edges = []
    for r in rows:
        s, t = keys.get(r["source"]), keys.get(r["target"])
        if s is None or t is None:  # an end beyond the node limit
            continue
        edges.append(GraphEdge(source=s, target=t, type=r["type"], band=_BAND_OF_EDGE.get(r["type"], band[s]),
                               valid_from_ms=r["valid_from_ms"], valid_to_ms=r["valid_to_ms"]))
    return edges


def plain_label(customer_names: dict[str, list[str]]):
    """A node's words in the whole view: a fact as `predicate: object`, a customer by their name on file."""
    def label(r: dict) -> str:
        labels = r["labels"] or ()
        if "Fact" in labels and r["predicate"]:
            return f"{r['predicate']}: {r['name']}"[:120]
        if "Customer" in labels and customer_names.get(r["key"]):
            return customer_names[r["key"]][0]
        return str(r["text"] or r["name"] or "")[:120]
    return label


async def graph(call: Call, limit: int = 5_000) -> ConsoleGraph:
    client, tenant = call.client, call.tenant
    if not await client.graph_exists(tenant):
        return ConsoleGraph(tenant=tenant, nodes=[], edges=[], truncated=False)
    rows = await client.run(tenant, q.GRAPH_NODES, {"limit": limit + 1})
    truncated = len(rows) > limit
    rows = rows[:limit]
    customers = [r["key"] for r in rows if "Customer" in (r["labels"] or ()) and r["key"]]
    on_file = await names.customer_names(client, tenant, customers)
    nodes, keys = to_nodes(rows, plain_label(on_file))
    edge_rows = await client.run(tenant, q.GRAPH_EDGES, {"limit": 3 * limit + 1})
    truncated = truncated or len(edge_rows) > 3 * limit
    edges = to_edges(edge_rows[:3 * limit], keys, nodes)
    groups.assign(nodes, edges)
    return ConsoleGraph(tenant=tenant, nodes=nodes, edges=edges, truncated=truncated)


async def open_conflicts(call: Call, limit: int = 50) -> OpenConflicts:
    client, tenant = call.client, call.tenant
    if not await client.graph_exists(tenant):
        return OpenConflicts(conflicts=[])
    rows = await client.run(tenant, q.OPEN_CONFLICTS, {"limit": limit})
    # a customer's entity name is their id: their name on file says who they are
    on_file = await names.customer_names(client, tenant, [r["subject"] for r in rows if r["subject"]])
    return OpenConflicts(conflicts=[OpenConflict(**{**r, "subject_name": (on_file.get(r["subject"]) or [r["subject_name"]])[0]})
                                    for r in rows])


async def indexes(call: Call) -> Indexes:
    client, tenant = call.client, call.tenant
    if not await client.graph_exists(tenant):
        return Indexes(tenant=tenant, indexes=[])
    rows = await client.run(tenant, q.INDEXES)
    return Indexes(tenant=tenant, indexes=[
        IndexInfo(label=r["label"], properties=list(r["properties"]), status=str(r["status"]),
                  types={k: list(v) for k, v in (r["types"] or {}).items()}) for r in rows])


async def knowledge_flows(call: Call, limit: int = 200) -> KnowledgeFlows:
    client, tenant = call.client, call.tenant
    if not await client.graph_exists(tenant):
        return KnowledgeFlows(flows=[])
    rows = await client.run(tenant, q.KNOWLEDGE_FLOWS, {"limit": limit})
    return KnowledgeFlows(flows=[KnowledgeFlow(**r) for r in rows])


async def _ticket_issue(call: Call, ticket_id: str) -> str:
    client, tenant = call.client, call.tenant
    return (await tickets.get_ticket(client, tenant, ticket_id)).issue


async def ticket_crossings(call: Call, ticket_id: str, limit: int = 200) -> TicketCrossings:
    """Knowledge crossings on one ticket, from CONSULTED edges: facts about its customer that an
    agent on the ticket consulted while it was open (the edge's first..last read overlaps the
    ticket's opened..closed, or ..now), written by another agent. A CONSULTED edge keeps a
    window, not each read, so a read just before or after the ticket on the same fact counts."""
    client, tenant = call.client, call.tenant
    await _ticket_issue(call, ticket_id)
    rows = await client.run(tenant, q.TICKET_CROSSINGS, {"ticket_id": ticket_id, "now_ms": now_ms(), "limit": limit})
    return TicketCrossings(ticket_id=ticket_id, crossings=[Crossing(**r) for r in rows])


async def ticket_experts(call: Call, ticket_id: str, limit: int = 20) -> TicketExperts:
    """"Who has worked on this?": the people on other tickets of similar issues, found by graph
    (the same Issue, or an Issue fixed with a step in common), most fixed first."""
    client, tenant = call.client, call.tenant
    issue = await _ticket_issue(call, ticket_id)
    rows = await client.run(tenant, q.TICKET_EXPERTS, {"ticket_id": ticket_id, "limit": limit})
    return TicketExperts(ticket_id=ticket_id, issue=issue, experts=[Expert(**r) for r in rows])


async def find_word(call: Call, word: str) -> int:
    """How many of the tenant's nodes carry `word` (lowercase) in their text: the isolation demo's
    raw search of everything (GRAPH.RO_QUERY); 0 for a tenant with no graph yet."""
    client, tenant = call.client, call.tenant
    if not await client.graph_exists(tenant):
        return 0
    return int((await client.run(tenant, q.FIND_WORD, {"word": word}))[0]["hits"])


STATEMENT_PACKAGES = (runtime_queries, memory_queries, desk_queries, lab_queries, usecase_queries)


def statement_modules():
    """(package, module info) of every module of named statements."""
    return [(package, info) for package in STATEMENT_PACKAGES for info in pkgutil.iter_modules(package.__path__)]


@cache
def named_queries() -> dict[str, Query]:
    """Every named statement of every package's `queries`, by name (what the query log records)."""
    found: dict[str, Query] = {}
    for package, info in statement_modules():
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            values = value.values() if isinstance(value, dict) else (value,)
            for v in values:
                if isinstance(v, Query):
                    found.setdefault(v.name, v)
    return found


_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _logged(tenant: str, r: query_log.LoggedQuery) -> LoggedQuery:
    return LoggedQuery(id=r.id, query=r.query, tenant=tenant, process=r.process, ok=r.ok, rows=r.rows, ms=r.ms,
                       at_ms=r.at_ms, read_only=r.read_only, profilable=r.read_only and r.params is not None,
                       kept_parameters=r.params is not None, housekeeping=r.housekeeping)


async def logged_queries(call: Call, limit: int = 200, *, housekeeping: bool = False) -> LoggedQueries:
    """The tenant's last queries from every process (runtime/query_log.py), this process's own
    written out first so the list is current to this moment; the housekeeping polls only when asked."""
    client, tenant = call.client, call.tenant
    await client.shared_log.flush()
    runs = await query_log.read(client.redis, tenant, limit, housekeeping=housekeeping)
    return LoggedQueries(queries=[_logged(tenant, r) for r in reversed(runs)])


def _percentile(sorted_ms: list[float], p: float) -> float:
    """The nearest-rank percentile: a value some run actually took."""
    return sorted_ms[max(0, min(len(sorted_ms) - 1, math.ceil(len(sorted_ms) * p / 100) - 1))]


def summarise(tenant: str, runs: list[query_log.LoggedQuery]) -> QuerySummary:
    """The runs grouped by statement (pure)."""
    by: dict[str, list[query_log.LoggedQuery]] = {}
    for r in runs:
        by.setdefault(r.query, []).append(r)
    out = []
    for name, rs in by.items():
        ms = sorted(r.ms for r in rs)
        slowest = max(rs, key=lambda r: r.ms)
        out.append(StatementSummary(query=name, processes=sorted({r.process for r in rs}), count=len(rs),
                                    errors=sum(not r.ok for r in rs), p50_ms=_percentile(ms, 50),
                                    p95_ms=_percentile(ms, 95), max_ms=ms[-1],
                                    housekeeping=any(r.housekeeping for r in rs), slowest=_logged(tenant, slowest)))
    out.sort(key=lambda s: (-s.p95_ms, s.query))
    return QuerySummary(runs=len(runs), statements=out)


async def query_summary(call: Call, limit: int = 1_000, *, housekeeping: bool = False) -> QuerySummary:
    """The tenant's logged queries grouped by statement: how often, errors, p50/p95/max, the slowest run."""
    client, tenant = call.client, call.tenant
    await client.shared_log.flush()
    return summarise(tenant, await query_log.read(client.redis, tenant, limit, housekeeping=housekeeping))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines() if line.strip()]


async def profile(call: Call, run_id: str) -> QueryProfile:
    """GRAPH.PROFILE of one logged run, with the parameters it ran with. Only a read-only run is
    profiled (PROFILE executes the statement), and only one whose parameters the log kept."""
    client, tenant = call.client, call.tenant
    run = await query_log.one(client.redis, tenant, run_id)
    if run is None:
        raise NotFound(f"no logged query {run_id!r} (the log keeps the last {client.settings.query_log_size})",
                       code="query_not_found")
    query = named_queries().get(run.query)
    if query is None:
        raise NotFound(f"no named statement {run.query!r}", code="query_not_found")
    if not run.read_only or run.params is None:
        raise InvalidInput(f"{run.query} {'writes' if not run.read_only else 'ran with parameters too large to keep'}"
                           "; only a read-only run with its parameters is profiled (EXPLAIN it instead)",
                           code="not_profilable")
    text = await client.profile(tenant, query, run.params)
    return QueryProfile(id=run.id, query=run.query, tenant=tenant, process=run.process, cypher=query.cypher.strip(),
                        parameters=run.params, plan=_lines(text))


async def plan(call: Call, name: str, run_id: str | None = None) -> QueryPlan:
    """GRAPH.EXPLAIN of the named statement on the tenant's graph, with the values a logged run
    (`run_id`) ran with when the log kept them, else every parameter null (EXPLAIN plans without
    running; a statement whose plan needs a value, a LIMIT's, is then 422 `not_plannable`)."""
    client, tenant = call.client, call.tenant
    query = named_queries().get(name)
    if query is None:
        raise NotFound(f"no named statement {name!r}", code="query_not_found")
    params: dict = {p: None for p in _PARAM.findall(query.cypher)}
    if run_id is not None:
        run = await query_log.one(client.redis, tenant, run_id)
        if run is None or run.query != name:
            raise NotFound(f"no logged run {run_id!r} of {name}", code="query_not_found")
        params.update(run.params or {})
    text = await client.explain(tenant, query, params)
    return QueryPlan(query=name, tenant=tenant, cypher=query.cypher.strip(), plan=_lines(text))
