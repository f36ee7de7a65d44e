"""The customer site's routes: a customer session (cookie, no key) that chats and reads what is the
customer's own: their conversations, tickets, facts, line, the plans of their country and a live
feed of the events about them. Every id a route takes is checked against the session's customer
and answers 404 when it is someone else's, so nobody learns whether it exists.

The cookie is HttpOnly, SameSite=Strict and its path is `/v1/tenants/{t}/me`, so the browser sends
it to these routes only; the tenant-key routes read `Authorization` and nothing else."""

from __future__ import annotations

import logging
from typing import Annotated, AsyncIterator

from fastapi import APIRouter, Depends, Path, Query, Request, Response, WebSocket
from pydantic import BaseModel, Field, StrictBool

from relay_graph.desk.conversation import ReplyKind
from relay_graph.desk.conversation import turns as chat_turns
from relay_graph.desk.customers import store as customers
from relay_graph.usecases import customers as customer_cases
from relay_graph.desk.network import store as network
from relay_graph.desk.conversation import site as site
from relay_graph.desk.tickets import store as tickets
from relay_graph.desk.catalogue.models import ExtraOffer, PlanOffer
from relay_graph.desk.catalogue.reads import addons_for, plans_for
from relay_graph.desk.conversation.reads import customer_country
from relay_graph.desk.conversation.sources import sources_in_words
from relay_graph.desk.customers.zone import customer_zone
from relay_graph.runtime.errors import NotFound, RelayError
from relay_graph.memory.models import FactView
from relay_graph.desk.network.models import CityStatus
from relay_graph.usecases.context import Call, Deps

from ..customer_sessions import COOKIE, SESSION_TTL_S, CustomerSession, CustomerSessions, cookie_path
from ..deps import DepsDep, FeedDep, HttpDep, MemoryDep, TenantKeyDep
from ..errors import responses
from ..idempotency import IdempotencyDep
from ..schemas import Answer, ChatAccepted, ChatAnswered, ConfirmResult, LineResult, Strict, TicketsResult, TicketView
from . import live as live_route
from .chat import MAX_WAIT_SECONDS, answer_turn
from .tickets import TicketId, confirm_ticket, ticket_row, ticket_view

log = logging.getLogger("relay.gateway.me")

router = APIRouter(prefix="/v1/tenants/{t}", tags=["customer site"])
GATEWAY = "gateway"  # who signs a site visitor up as a customer
TenantPath = Annotated[str, Path(alias="t", description="the tenant whose site this is", examples=["demo"])]


async def _sessions(http) -> CustomerSessions:
    return CustomerSessions((await http.keys()).redis)


async def customer_session(request: Request, http: HttpDep, tenant: TenantPath) -> CustomerSession:
    session = await (await _sessions(http)).resolve(request.cookies.get(COOKIE), tenant)
    http.limiter.hit("customer:" + session.customer)
    return session


CustomerDep = Annotated[CustomerSession, Depends(customer_session)]


async def session_call(session: CustomerDep, deps: DepsDep, memory: MemoryDep) -> AsyncIterator[Call]:
    """The call the session's turns are taken in: written down by the desk's front door (flushed when
    the route returns, as every route's call is)."""
    async with deps.work(session.tenant, chat_turns.AGENT) as call:
        yield call


async def customer_call(session: CustomerDep, deps: DepsDep, memory: MemoryDep) -> AsyncIterator[Call]:
    """The call the session's customer acts in (their word on a ticket), flushed when the route returns."""
    async with deps.work(session.tenant, "customer") as call:
        yield call


SessionCallDep = Annotated[Call, Depends(session_call, scope="function")]
CustomerCallDep = Annotated[Call, Depends(customer_call, scope="function")]


class SiteBody(Strict):
    open: StrictBool = Field(description="true: anyone may open this tenant's customer site and get a customer session")


class SiteState(BaseModel):
    tenant: str
    open: bool


class Me(BaseModel):
    tenant: str
    customer: str = Field(description="the customer id this session speaks for")
    time_zone: str = Field(default="UTC", examples=["Asia/Kolkata"], description="the zone the customer's times "
                           "are worded in (their city's, else their browser's, else their country's): the site "
                           "shows every time in it")


async def _me(client, session: CustomerSession) -> Me:
    zone = await customer_zone(client, session.tenant, session.customer)
    return Me(tenant=session.tenant, customer=session.customer, time_zone=getattr(zone, "key", None) or "UTC")


class StartSessionBody(Strict):
    time_zone: customers.TimeZoneName | None = Field(
        default=None, description="the browser's time zone: until the customer gives an address, the desk "
        "prices plans in its country when this tenant serves it")


class MeChatBody(Strict):
    text: str = Field(min_length=1, max_length=8_000, examples=["Hi, I'm Asha and my internet is down"])
    session: str | None = Field(default=None, min_length=1, max_length=128,
                                description="your conversation to continue; default a new one")


class Conversations(BaseModel):
    conversations: list[site.Conversation]


class Turns(BaseModel):
    session: str
    turns: list[site.ConversationTurn]


class MyFacts(BaseModel):
    facts: list[FactView] = Field(description="every version of every fact about you, current and ended")


class Offers(BaseModel):
    country: str
    plans: list[PlanOffer]
    addons: list[ExtraOffer]


class Coverage(BaseModel):
    cities: list[CityStatus] = Field(description="the served cities short of normal right now; empty when all run")


@router.put("/site", response_model=Answer[SiteState], responses=responses(401, 403, 413, 422, 429, 503),
            summary="Open or close this tenant's customer site (tenant key)",
            description="The tenant's own key only (an agent key: 403 `tenant_key_required`).")
async def set_site(body: SiteBody, tenant: TenantKeyDep, http: HttpDep) -> SiteState:
    await (await _sessions(http)).set_site_open(tenant, body.open)
    return SiteState(tenant=tenant, open=body.open)


@router.post("/me/session", status_code=201, response_model=Answer[Me],
             responses={200: {"model": Me, "description": "the cookie already names a live session"},
                        **responses(404, 422, 429, 503)},
             summary="Start a customer session on an open site (sets the HttpOnly cookie)",
             description="A new customer id and a session cookie (HttpOnly, SameSite=Strict, path `/v1/tenants/{t}/me`). "
             "A cookie of a live session on this site answers 200 with it and creates nothing. Rate-limited per "
             "client address. 404 `site_closed` when the tenant has not opened its site.")
async def start_session(request: Request, response: Response, deps: DepsDep, http: HttpDep, tenant: TenantPath,
                        body: StartSessionBody | None = None) -> Me:
    store = await _sessions(http)
    existing = request.cookies.get(COOKIE)
    if existing:
        try:
            session = await store.resolve(existing, tenant)
            response.status_code = 200
            return await _me((await deps.open()).client, session)
        except RelayError:
            pass  # ended or another site's: a new one replaces it
    http.site_limiter.hit("site:" + (request.client.host if request.client else "?"))
    await store.check_open(tenant)  # before a customer is made
    await deps.open()
    async with deps.work(tenant, GATEWAY) as call:
        customer = await customer_cases.create_customer(call)
        if body is not None and body.time_zone is not None:
            await customer_cases.set_time_zone(call, customer, body.time_zone)
    token, session = await store.create(tenant, customer)
    with_cookie(response, request, token, tenant)
    return await _me(deps.client, session)


def with_cookie(response: Response, request: Request, token: str, tenant: str) -> None:
    """Sets the customer session's cookie on the route's response."""
    response.set_cookie(COOKIE, token, max_age=SESSION_TTL_S, path=cookie_path(tenant), httponly=True,
                        samesite="strict", secure=request.url.scheme == "https")


@router.get("/me", response_model=Answer[Me], responses=responses(401, 403, 404, 429, 503), summary="Who this session is")
async def me(session: CustomerDep, memory: MemoryDep) -> Me:
    return await _me(memory.client, session)


@router.post("/me/chat", status_code=202, response_model=Answer[ChatAccepted | ChatAnswered],
             responses={200: {"model": ChatAnswered, "description": "the desk replied within `wait`"},
                        **responses(401, 403, 404, 409, 413, 422, 429, 503)},
             summary="Say something to the desk, as yourself",
             description="POST /chat with the session's customer: another customer's conversation is refused (409).")
async def my_chat(
    body: MeChatBody,
    request: Request,
    session: CustomerDep,
    call: SessionCallDep,
    feed: FeedDep,
    http: HttpDep,
    idem: IdempotencyDep,
    response: Response,
    wait: Annotated[float, Query(ge=0, le=MAX_WAIT_SECONDS)] = 0,
) -> ChatAccepted | ChatAnswered:
    answered = await idem.run_once(session.tenant, f"me-chat:{session.customer}", body, response, lambda: answer_turn(
        call, feed, idem, response, customer=session.customer, text=body.text, session=body.session, wait=wait))
    if isinstance(answered, ChatAnswered) and ReplyKind.ERASED.value in answered.reply.answers:
        # Their data is gone on their word: the session that was theirs ends with the desk's last reply.
        await (await _sessions(http)).end(session.tenant, request.cookies.get(COOKIE) or "")
        response.delete_cookie(COOKIE, path=cookie_path(session.tenant))
    return answered


@router.get("/me/conversations", response_model=Answer[Conversations], responses=responses(401, 403, 404, 429, 503),
            summary="Your conversations, newest first")
async def my_conversations(session: CustomerDep, memory: MemoryDep) -> Conversations:
    return Conversations(conversations=await site.conversations(memory.client, session.tenant,
                                                                         session.customer))


@router.get("/me/conversations/{session_id}", response_model=Answer[Turns], responses=responses(401, 403, 404, 429, 503),
            summary="One of your conversations, turn by turn (each reply's how-I-know, and its sources in words)")
async def my_conversation(session: CustomerDep, memory: MemoryDep,
                          session_id: Annotated[str, Path(min_length=1, max_length=128)]) -> Turns:
    turns = await site.turns(memory.client, session.tenant, session.customer, session_id)
    zone = await customer_zone(memory.client, session.tenant, session.customer)
    return Turns(session=session_id, turns=[t.model_copy(update={"sources": sources_in_words(t.how_i_know, zone)})
                                            if t.how_i_know else t for t in turns])


@router.get("/me/tickets", response_model=Answer[TicketsResult], responses=responses(401, 403, 404, 429, 503),
            summary="Your tickets, newest first")
async def my_tickets(session: CustomerDep, memory: MemoryDep) -> TicketsResult:
    rows = await tickets.list_tickets(memory.client, session.tenant, session.customer)
    return TicketsResult(tickets=[ticket_row(r) for r in rows])


@router.get("/me/tickets/{id}", response_model=Answer[TicketView], responses=responses(401, 403, 404, 429, 503),
            summary="One of your tickets with its timeline (another customer's: 404)")
async def my_ticket(session: CustomerDep, memory: MemoryDep, ticket_id: TicketId) -> TicketView:
    if not await site.ticket_is_for(memory.client, session.tenant, ticket_id, session.customer):
        raise NotFound("you have no ticket with that id", code="ticket_not_found")
    return ticket_view(await tickets.get_ticket(memory.client, session.tenant, ticket_id))


class MeConfirmBody(Strict):
    fixed: StrictBool = Field(description="true: it works now (the ticket closes); false: it does not (it reopens)")


@router.post("/me/tickets/{id}/confirm", response_model=Answer[ConfirmResult],
             responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             summary="Your word on one of your tickets: fixed closes it, not fixed reopens it")
async def my_confirm(body: MeConfirmBody, session: CustomerDep, call: CustomerCallDep,
                     ticket_id: TicketId) -> ConfirmResult:
    if not await site.ticket_is_for(call.client, session.tenant, ticket_id, session.customer):
        raise NotFound("you have no ticket with that id", code="ticket_not_found")
    return await confirm_ticket(call, ticket_id, fixed=body.fixed)


@router.get("/me/facts", response_model=Answer[MyFacts], responses=responses(401, 403, 404, 429, 503),
            summary="Everything the desk holds about you, current and ended")
async def my_facts(session: CustomerDep, memory: MemoryDep) -> MyFacts:
    return MyFacts(facts=await memory.history(session.tenant, session.customer))


@router.get("/me/line", response_model=Answer[LineResult], responses=responses(401, 403, 404, 429, 503),
            summary="Your path from home to the core, each node's status (empty until you have a line)")
async def my_line(session: CustomerDep, memory: MemoryDep) -> LineResult:
    try:
        hops = await network.customer_line(memory.client, session.tenant, session.customer)
    except NotFound:  # the desk has not met you yet
        hops = []
    return LineResult(customer=session.customer, line=hops)


@router.get("/me/plans", response_model=Answer[Offers], responses=responses(401, 403, 404, 422, 429, 503),
            summary="The plans and add-ons of a country, priced locally with tax",
            description="Without `country`: the country whose prices the desk quotes this customer (their "
            "address's, else their browser's time zone's, else the desk's home country).")
async def my_plans(session: CustomerDep, memory: MemoryDep,
                   country: Annotated[str | None, Query(min_length=2, max_length=2, examples=["IN"])] = None
                   ) -> Offers:
    if country is None:
        theirs = await customer_country(memory.client, session.tenant, session.customer)
        if theirs is None:
            raise NotFound("this desk has no catalogue yet", code="catalogue_not_found")
        country = theirs.code
    plans = await plans_for(memory.client, session.tenant, country)
    addons = await addons_for(memory.client, session.tenant, country)
    return Offers(country=country.upper(), plans=plans, addons=addons)


@router.get("/me/coverage", response_model=Answer[Coverage], responses=responses(401, 403, 404, 429, 503),
            summary="The cities whose network is degraded or cut off right now")
async def my_coverage(session: CustomerDep, memory: MemoryDep) -> Coverage:
    return Coverage(cities=await network.degraded_cities(memory.client, session.tenant))


@router.websocket("/me/live")
async def my_live(websocket: WebSocket, t: str) -> None:
    """The tenant's live feed, kept to the events about the session's customer: their tickets, the
    replies in their conversations, their facts and outages on their line."""
    deps: Deps | None = getattr(websocket.app.state, "deps", None)
    if deps is None or deps.http is None:
        await live_route._refuse(websocket, live_route.CLOSE_TRY_AGAIN, "the gateway is starting; retry shortly")
        return
    try:
        http = deps.http
        session = await (await _sessions(http)).resolve(websocket.cookies.get(COOKIE), t)
        http.limiter.hit("customer:" + session.customer)
        await http.feed.tail.start()
        memory = await deps.open()
    except RelayError as exc:
        await live_route._refuse(websocket, live_route._close_code(exc), exc.message)
        return
    except Exception as exc:  # noqa: BLE001 - the key store did not answer
        log.warning("customer live socket refused: %r", exc)
        await live_route._refuse(websocket, live_route.CLOSE_TRY_AGAIN, "not ready; retry shortly")
        return
    await live_route.pump(websocket, http.feed, session.tenant, keep=_keeper(memory.client, session))


def _keeper(client, session: CustomerSession):
    """Whether an event is about this customer, each ticket and session looked up once."""
    known: dict[tuple[str, str], bool] = {}

    async def about(kind: str, key: str, check) -> bool:
        if (kind, key) not in known:
            known[(kind, key)] = await check()
        return known[(kind, key)]

    async def keep(event: dict) -> bool:
        event.pop("missed", None)  # a count that includes other customers' events
        tenant, customer = session.tenant, session.customer
        kind = event.get("kind")
        try:
            if kind in ("ticket", "handoff"):
                return await about("ticket", event["id"],
                                   lambda: site.ticket_is_for(client, tenant, event["id"], customer))
            if kind == "reply":
                return bool(event.get("session")) and await about(
                    "session", event["session"], lambda: site.session_is_of(client, tenant, event["session"], customer))
            if kind == "fact":
                return await site.fact_is_about(client, tenant, event["id"], customer)
            if kind == "outage":
                try:
                    hops = await network.customer_line(client, tenant, customer)
                except NotFound:
                    return False
                return any(h.node_id == event.get("node_id") for h in hops)
        except Exception as exc:  # noqa: BLE001 - an event we cannot place is not sent
            log.warning("customer feed could not place %s %s: %r", kind, event.get("id"), exc)
        return False

    return keep
