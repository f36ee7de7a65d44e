"""Judge mode: one click plays the demo story in the page, through the real agents, on a throwaway
tenant of its own, deleted an hour later (RELAY_JUDGE_TENANT_TTL_S; judge_tenants.py). This route makes that tenant (open site, the India catalogue and network seeded,
the story's customer with a session cookie in this browser) and hands the page the words she says;
the page plays the steps through the customer's own `/me` routes, holding each caption at least
`hold_s` (RELAY_JUDGE_HOLD_S). Her home is connected in Pune before she says a word, and the lab
breaks the fibre in her home (LINE_FAULT, which the desk measures as no light at her box: the red
LOS light she reports), as in demo.py; the story is the one demo.py checks, whose Wi-Fi fault the
resolver measures, fixes remotely and measures again. The page holds no key to plant that fault, so
this route does it, as the lab would, once her first ticket is closed (`_wifi_fault_after_first`)."""

from __future__ import annotations

import asyncio
import logging
import secrets

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from relay_graph.desk.tickets import store as tickets
from relay_graph.usecases import faults, judge_story
from relay_graph.usecases.context import Deps
from relay_graph.desk.tickets.models import TicketStage
from relay_graph.runtime.errors import TenantNotFound
from services.simulator.demo import FIRST_CITY, LINE_FAULT, SAYS, WIFI_FAULT

from .. import judge_tenants
from ..customer_sessions import CustomerSessions
from ..deps import DepsDep, HttpDep
from ..errors import Forbidden, responses
from ..schemas import Answer
from .me import with_cookie

router = APIRouter(prefix="/v1/site", tags=["customer site"])
GATEWAY = "gateway"  # who seeds the story's world and signs its customer up

REGION = "india"
WIFI_WAIT_S = 900.0  # the story takes one to two minutes; a page closed half-way leaves this task
log = logging.getLogger("services.gateway")


class JudgeStory(BaseModel):
    tenant: str = Field(description="the throwaway tenant the story plays on; its site is at /t/{tenant}/")
    customer: str
    says: dict[str, str] = Field(description="what the customer says at each step, by step name")
    hold_s: float = Field(description="how long the page holds each step's caption, at least, once its event "
                                      "happened (RELAY_JUDGE_HOLD_S)")


@router.post("/judge", status_code=201, response_model=Answer[JudgeStory], responses=responses(403, 429, 503),
             summary="Start Judge mode: a throwaway tenant with the story's customer signed in",
             description="Rate-limited per client address; 403 when this gateway has Judge mode off "
             "(RELAY_JUDGE_MODE=false); 503 `judge_mode_full` with Retry-After when RELAY_JUDGE_MAX_TENANTS "
             "Judge tenants are live already. Sets the customer session cookie for the new tenant's site. "
             "The tenant and everything in it is deleted after RELAY_JUDGE_TENANT_TTL_S (an hour).")
async def start_judge(request: Request, response: Response, deps: DepsDep, http: HttpDep) -> JudgeStory:
    if not http.settings.judge_mode:
        raise Forbidden("Judge mode is off on this gateway (RELAY_JUDGE_MODE)")
    http.judge_limiter.hit("judge:" + (request.client.host if request.client else "?"))
    keys = await http.keys()
    tenant = "judge-" + secrets.token_hex(5)
    # Noted first (within the bound), so a tenant is never made that the sweep does not know of.
    await judge_tenants.claim(keys.redis, tenant, http.settings.judge_tenant_ttl_s, http.settings.judge_max_tenants)
    await keys.create(tenant)  # its key is never shown: the story runs as the customer only
    await deps.open()
    store = CustomerSessions(keys.redis)
    await store.set_site_open(tenant, True)
    async with deps.work(tenant, GATEWAY) as call:
        customer = await judge_story.story_customer(call, REGION, FIRST_CITY)
    async with deps.work(tenant, faults.LAB) as call:  # the red LOS light she is about to report
        await faults.inject_fault(call, kind=LINE_FAULT, customer=customer)
    token, session = await store.create(tenant, customer)
    http.spawn(_wifi_fault_after_first(deps, tenant, session.customer), name=f"judge-wifi-fault-{tenant}",
               tenant=tenant)
    with_cookie(response, request, token, tenant)
    return JudgeStory(tenant=tenant, customer=session.customer, says=SAYS, hold_s=http.settings.judge_hold_s)


async def _wifi_fault_after_first(deps: Deps, tenant: str, customer: str) -> None:
    """Once the story's first ticket is closed (she confirmed the technician's fix), the lab crowds
    her Wi-Fi channel: the fault her Wi-Fi complaint of step 6 is about."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WIFI_WAIT_S
    try:
        while loop.time() < deadline:
            await asyncio.sleep(0.5)
            if any(t.stage is TicketStage.CLOSED for t in await tickets.list_tickets(deps.client, tenant, customer)):
                async with deps.work(tenant, faults.LAB) as call:
                    await faults.inject_fault(call, kind=WIFI_FAULT, customer=customer)
                return
    except asyncio.CancelledError:
        raise
    except TenantNotFound:  # deleted meanwhile (its time was up): nothing to plant
        return
    except Exception:  # a demo aid: its failure shows as the story's step 7, never as a gateway error
        log.exception("judge mode: could not plant the Wi-Fi fault in %s", tenant)
