"""The staff console's own reads (/v1/console/...), with a tenant's key (its own tenant) or the
admin key (any tenant that exists): who the key is, the tenant's graph, its open conflicts, the
knowledge flowing between its agents, its database figures, the queries every process ran on it with
their plans and profiles, and a live socket that takes its key in the first
message (a browser cannot set a socket's headers, and the key must never be in a URL)."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, AsyncIterator

from fastapi import APIRouter, Depends, Path, Query, Request, WebSocket
from pydantic import BaseModel, ConfigDict, Field

from relay_graph.usecases import compare, console, console_focus, network_map
from relay_graph.usecases import simulator_control as sim
from relay_graph.usecases import operations as ops
from relay_graph.runtime import query_log
from relay_graph.runtime.errors import NotFound, RelayError
from relay_graph.memory.inputs import Identifier, Name, Text
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.usecases.context import Call, Deps

from ..auth import Caller
from ..deps import BearerDep, DepsDep, Http, HttpDep, MemoryDep, OperationsMemoryDep, _identified, _token
from ..errors import Forbidden, responses
from ..schemas import Answer, Strict
from .live import CLOSE_FORBIDDEN, CLOSE_TRY_AGAIN, _close_code, _refuse, pump

router = APIRouter(prefix="/v1/console", tags=["console"])
ERRORS = responses(401, 403, 404, 422, 429, 503)
FIRST_MESSAGE_S = 10.0  # how long a console socket waits for its key
CONSOLE = "console"  # who the console acts as


async def allowed(http: Http, token: str | None, tenant: str) -> Caller:
    """The caller, when it may see `tenant` in the console: its own tenant's key, or the admin key
    for a tenant that exists."""
    caller = await http.auth.identify(token)
    if caller.admin:
        validate_tenant(tenant)
        if not await (await http.keys()).exists(tenant):
            raise NotFound(f"no tenant {tenant!r}")
    elif caller.tenant != tenant:
        raise Forbidden("this key belongs to another tenant")
    await http.admit(caller)
    return caller


async def console_tenant(http: HttpDep, credentials: BearerDep, request: Request,
                         t: Annotated[str, Path(max_length=63, description="the tenant to look at")]) -> str:
    await _identified(http, request, allowed(http, _token(credentials), t))
    return t


ConsoleTenant = Annotated[str, Depends(console_tenant)]


async def console_call(tenant: ConsoleTenant, deps: DepsDep, memory: MemoryDep) -> AsyncIterator[Call]:
    """The use cases' call for what the console reads and does in `tenant`, as the console."""
    async with deps.work(tenant, CONSOLE) as call:
        yield call


ConsoleCall = Annotated[Call, Depends(console_call, scope="function")]


class Whoami(BaseModel):
    admin: bool
    tenant: str | None = Field(description="the tenant the key belongs to (null for the admin key)")
    agent: str | None
    tenants: list[str] = Field(description="the tenants this key may open in the console")


class Database(BaseModel):
    stats: ops.GraphStats
    indexes: list[console.IndexInfo]


@router.get("/whoami", response_model=Answer[Whoami], responses=responses(401, 429, 503),
            summary="Who a key is, and which tenants it may open in the console")
async def whoami(http: HttpDep, credentials: BearerDep, request: Request) -> Whoami:
    caller = await _identified(http, request, http.auth.identify(_token(credentials)))
    await http.admit(caller)
    if caller.admin:
        tenants = sorted(await (await http.keys()).tenants())
        return Whoami(admin=True, tenant=None, agent=None, tenants=tenants)
    return Whoami(admin=False, tenant=caller.tenant, agent=caller.agent, tenants=[caller.tenant])


@router.get("/tenants/{t}/graph", response_model=Answer[console.ConsoleGraph], responses=ERRORS,
            summary="The tenant's graph: every node and edge (up to `limit`), by band, with both clocks")
async def graph(call: ConsoleCall,
                limit: Annotated[int, Query(ge=1, le=console.MAX_LIMIT)] = 5_000) -> console.ConsoleGraph:
    return await console.graph(call, limit)


@router.get("/tenants/{t}/search", response_model=Answer[console_focus.SearchAnswer], responses=ERRORS,
            summary="Find a customer by name, id, phone or ticket id, to focus the graph on",
            description="A ticket id (`T-…`) finds its customer; a customer id that customer; a phone number (digits, "
            "spaces, +, -, brackets) the customers whose current `phone` fact ends in those digits; anything else is a "
            "name, found as GET /customers finds one: exactly (one, or several listed), or spelt alike, then offered "
            "(`how`: `fuzzy`, `did_you_mean`) and never chosen. 422 for an empty or over-long search.")
async def search(call: ConsoleCall, q: Annotated[str, Query(min_length=1, max_length=console_focus.MAX_QUERY,
                                                           pattern=r"\S",  # not blank: what the engine enforces
                                                           description="a name, customer id, phone or ticket id",
                                                           examples=["Asha Verma"])]) -> console_focus.SearchAnswer:
    return await console_focus.search(call, q)


CustomerId = Annotated[Name, Path(description="the customer's id (or, for an older tenant, exact name)",
                                  examples=["c-1f0e2d3c4b5a6978"])]


@router.get("/tenants/{t}/customers/{c}/neighbourhood", response_model=Answer[console.ConsoleGraph],
            responses=ERRORS, summary="One customer's part of the graph, labelled in words",
            description="The customer; their facts on both clocks (current, superseded, retired, claims), the facts "
            "they replaced, the agents who wrote them and the messages they came from; their sessions and newest "
            "turns; their tickets with the timeline, technician visits and the agents who handed off or picked up; "
            "their line (home box, cabinet, exchange, hub, core). `focus` is the customer's node. 404 "
            "`customer_not_found`.")
async def neighbourhood(call: ConsoleCall, c: CustomerId) -> console.ConsoleGraph:
    return await console_focus.neighbourhood(call, c)


@router.get("/tenants/{t}/customers/{c}/clocks", response_model=Answer[console_focus.Clocks], responses=ERRORS,
            summary="The customer's facts whose world time and record time disagree, each with why",
            description="A late fact (learnt more than an hour after it became true), one on file ahead of time, or "
            "one taken off file while still true (corrected), each with a sentence: \"true since 1 March 2026, "
            "learnt on 5 March 2026 from the customer's message (intake)\". Facts whose clocks agree are not listed. "
            "404 `customer_not_found`.")
async def clocks(call: ConsoleCall, c: CustomerId) -> console_focus.Clocks:
    return await console_focus.clocks(call, c)


@router.get("/tenants/{t}/conflicts", response_model=Answer[console.OpenConflicts], responses=ERRORS,
            summary="The tenant's open conflicts, newest first")
async def conflicts(call: ConsoleCall,
                    limit: Annotated[int, Query(ge=1, le=500)] = 50) -> console.OpenConflicts:
    return await console.open_conflicts(call, limit)


@router.get("/tenants/{t}/knowledge", response_model=Answer[console.KnowledgeFlows], responses=ERRORS,
            summary="Knowledge flows between agents: whose facts which agent consulted, how often")
async def knowledge(call: ConsoleCall) -> console.KnowledgeFlows:
    return await console.knowledge_flows(call)


@router.get("/tenants/{t}/network/map", response_model=Answer[network_map.NetworkMap], responses=ERRORS,
            summary="The region as a map: hubs and exchanges at their coordinates, uplinks, open outages",
            description="Every city hub (Pop) and area exchange (Olt) at the coordinates of the served footprint "
            "(the gazetteer's for a city or a locality, a few km off the city's for a compass district), each core "
            "(Backbone) at the middle of the hubs it serves, with its state (`up`), the uplinks between them, and "
            "the open outages with how many customers each reaches. Nodes the footprint cannot place (a hand-built "
            "network's) are counted in `unplaced`. \"Who is affected\" and the paths behind it: "
            "GET /v1/tenants/{t}/network/affected?node=.")
async def map_of_network(call: ConsoleCall) -> network_map.NetworkMap:
    return await network_map.network_map(call)


class CompareBody(Strict):
    question: Text = Field(max_length=500, examples=["Where does Asha Verma live?"])
    customer: Name = Field(max_length=200, description="the customer it is about (a name or an id)",
                           examples=["Asha Verma"])


@router.post("/tenants/{t}/compare", response_model=Answer[compare.Comparison], responses=ERRORS,
             summary="The same question asked of Relay and of a plain vector store, live: answers and evidence",
             description="Relay: recall about the customer (its facts, current first, and the episodes on its path). "
             "The vector store: the memory benchmark's baseline on this tenant's own turns (the customer's episodes, "
             "the same embedding model, the 10 nearest to the question by cosine, dated, newest first). No reader "
             "runs here: each side's `answer` is what it puts first.")
async def compare_systems(body: CompareBody, call: ConsoleCall) -> compare.Comparison:
    return await compare.compare(call, body.question, body.customer)


class SimControlBody(Strict):
    model_config = ConfigDict(extra="forbid", strict=True)  # `0` is not false, `true` not 1

    running: bool = Field(description="false stops the simulated customers (their clock stands still)")
    speed: float = Field(ge=sim.MIN_SPEED, le=sim.MAX_SPEED, description="simulated hours per second, 0.5 to 8",
                         examples=[2])


class SimStatusBody(Strict, sim.SimStatus):
    pass


SIM_DOC = ("The control lives in the key `relay:simulator:<tenant>` on the FalkorDB server; the simulator process "
           "reads it here about once a second with its tenant key and reports what it is doing with PUT "
           ".../simulator/status.")


@router.get("/tenants/{t}/simulator", response_model=Answer[sim.Simulator], responses=ERRORS,
            summary="The simulator's control and what the simulated customers are doing now", description=SIM_DOC)
async def simulator(call: ConsoleCall) -> sim.Simulator:
    return await sim.read(call)


@router.put("/tenants/{t}/simulator", response_model=Answer[sim.SimControl], responses=ERRORS,
            summary="Start or stop the simulated customers, and set their speed (0.5 to 8 simulated hours a second)",
            description=SIM_DOC + " Stopped, no new event of the customers' storylines is released (a turn in flight "
            "finishes); started again, they carry on where they stood.")
async def control_simulator(body: SimControlBody, call: ConsoleCall) -> sim.SimControl:
    return await sim.set_control(call, running=body.running, speed=body.speed, by="console")


@router.put("/tenants/{t}/simulator/status", response_model=Answer[sim.SimReport], responses=ERRORS,
            summary="The simulator's report: its state, speed, round, simulated hours and what each customer is doing",
            description="Written by the simulator process (services/simulator) about once a second; shown as not "
            "`live` after ten seconds without one.")
async def simulator_status(body: SimStatusBody, call: ConsoleCall) -> sim.SimReport:
    return await sim.report(call, sim.SimStatus(**body.model_dump()))


TicketId = Annotated[Identifier, Path(description="the ticket's id", examples=["T-1A2B3C4D5E6F"])]


@router.get("/tenants/{t}/tickets/{id}/crossings", response_model=Answer[console.TicketCrossings],
            responses=ERRORS, summary="Knowledge crossings on one ticket: whose facts its agents consulted",
            description="From CONSULTED edges: facts about the ticket's customer that an agent working the ticket "
            "consulted while it was open, written by another agent (who wrote, who read, the fact, how often). "
            "404 `not_found` for a ticket the tenant does not have.")
async def crossings(call: ConsoleCall, id: TicketId) -> console.TicketCrossings:
    return await console.ticket_crossings(call, id)


@router.get("/tenants/{t}/tickets/{id}/experts", response_model=Answer[console.TicketExperts],
            responses=ERRORS, summary="Who has worked on this? People on tickets of similar issues",
            description="Found by graph: other tickets about the same Issue, or about an Issue whose fix shares a "
            "step with a fix that worked on this one; the agents on their timelines and the technicians who "
            "visited, most similar tickets fixed first. 404 `not_found` for a ticket the tenant does not have.")
async def experts(call: ConsoleCall, id: TicketId) -> console.TicketExperts:
    return await console.ticket_experts(call, id)


@router.get("/tenants/{t}/database", response_model=Answer[Database], responses=ERRORS,
            summary="Counts by label and type, memory use, the slow log and the indexes")
async def database(call: ConsoleCall, operations: OperationsMemoryDep) -> Database:
    stats = await ops.graph_stats(operations.client, call.tenant)  # GRAPH.MEMORY, GRAPH.SLOWLOG: the operations user's
    return Database(stats=stats, indexes=(await console.indexes(call)).indexes)


HOUSEKEEPING = ("include the housekeeping polls every process runs on a timer (the outbox relay's), kept in a "
                "log of their own so they never push the other queries out")
RUN_PATTERN = query_log.RUN_ID_PATTERN  # two numbers below 2^64: a larger one would reach Redis and fail there
RunId = Annotated[str, Path(pattern=RUN_PATTERN, description="a logged run's `id`",
                            examples=["1764637200000-0"])]


@router.get("/tenants/{t}/queries", response_model=Answer[console.LoggedQueries], responses=ERRORS,
            summary="The last queries every process (gateway and agents) ran on this tenant, with times and rows",
            description="From the tenant's shared query log (each process writes its named statements there "
            "within half a second of running them): the statement's name, the process, ok, rows, milliseconds, "
            "when, and whether PROFILE can run it again (`profilable`: a read-only run whose parameters were kept).")
async def queries(call: ConsoleCall,
                  limit: Annotated[int, Query(ge=1, le=1_000)] = 200,
                  housekeeping: Annotated[bool, Query(description=HOUSEKEEPING)] = False) -> console.LoggedQueries:
    return await console.logged_queries(call, limit, housekeeping=housekeeping)


@router.get("/tenants/{t}/queries/summary", response_model=Answer[console.QuerySummary], responses=ERRORS,
            summary="The logged queries grouped by statement: count, errors, p50/p95/max ms, the slowest run",
            description="Over the last `limit` logged runs, slowest p95 first. The slowest run's `profilable` says "
            "whether PROFILE can run it again (.../queries/runs/{run}/profile), else EXPLAIN it with its values "
            "(.../queries/{name}/plan?run=).")
async def query_summary(call: ConsoleCall,
                        limit: Annotated[int, Query(ge=1, le=1_000)] = 1_000,
                        housekeeping: Annotated[bool, Query(description=HOUSEKEEPING)] = False) -> console.QuerySummary:
    return await console.query_summary(call, limit, housekeeping=housekeeping)


@router.get("/tenants/{t}/queries/runs/{run}/profile", response_model=Answer[console.QueryProfile],
            responses=ERRORS, summary="GRAPH.PROFILE of one logged read, run again with its parameters",
            description="PROFILE executes the statement, so only a read-only run is profiled; 422 `not_profilable` "
            "for a write or a run whose parameters were too large to keep (EXPLAIN it by name instead); 404 "
            "`query_not_found` for a run the log no longer keeps.")
async def query_profile(call: ConsoleCall, run: RunId) -> console.QueryProfile:
    return await console.profile(call, run)


@router.get("/tenants/{t}/queries/{name}/plan", response_model=Answer[console.QueryPlan], responses=ERRORS,
            summary="GRAPH.EXPLAIN of a named statement on the tenant's graph",
            description="With `run` (a logged run of that statement), planned with the values it ran with when the "
            "log kept them; otherwise every parameter is null, and a statement whose plan needs a value (a LIMIT's) "
            "is 422 `not_plannable`.")
async def query_plan(call: ConsoleCall, name: Annotated[Identifier, Path()],
                     run: Annotated[str | None, Query(pattern=RUN_PATTERN, description="a logged run's `id`")] = None,
                     ) -> console.QueryPlan:
    return await console.plan(call, name, run)


@router.websocket("/tenants/{t}/live")
async def live(websocket: WebSocket, t: str) -> None:
    """The tenant's live events, as /v1/tenants/{t}/live sends them; the first message from the
    client is `{"token": "<key>"}` (close 4401 without a good one, 4403 for another tenant's)."""
    deps: Deps | None = getattr(websocket.app.state, "deps", None)
    if deps is None or deps.http is None:
        await _refuse(websocket, CLOSE_TRY_AGAIN, "the gateway is starting; retry shortly")
        return
    http = deps.http
    await websocket.accept()
    try:
        first = await asyncio.wait_for(websocket.receive_text(), FIRST_MESSAGE_S)
        token = json.loads(first).get("token") if first.startswith("{") else None
        await allowed(http, token if isinstance(token, str) else None, t)
        await http.feed.tail.start()
    except RelayError as exc:
        code = CLOSE_FORBIDDEN if isinstance(exc, NotFound) else _close_code(exc)
        await websocket.close(code, exc.message.encode()[:123].decode(errors="ignore"))
        return
    except Exception:  # no first message in time, not JSON, or the client left
        await websocket.close(4401, "send {\"token\": \"<key>\"} first")
        return
    # "ready" goes out once subscribed: an event after it reaches the page.
    await pump(websocket, http.feed, t, on_subscribed=lambda: websocket.send_text(json.dumps({"kind": "ready", "tenant": t})))
