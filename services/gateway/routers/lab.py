"""The fault lab over HTTP: injecting a fault (the simulator's and the benchmark's way in) and the
grader's scoreboard. The truth stays in the lab: the answer names the fault and the customer it
was aimed at, and lists only what anyone can see on the network (a node or link gone down).
A node that went down is announced (NetworkChanged "down", with the node's version) so netops
declares the outage and warns the customers behind it before they complain."""

from __future__ import annotations

from fastapi import APIRouter

from relay_graph import lab
from relay_graph.usecases import faults

from ..deps import CallDep, MemoryDep, TenantDep
from ..errors import responses
from ..schemas import Answer, FaultBody, FaultInjected, ScoreboardResult

router = APIRouter(prefix="/v1/tenants/{t}/lab", tags=["lab"])


@router.post("/faults", status_code=201, response_model=Answer[FaultInjected],
             responses=responses(401, 403, 404, 409, 413, 422, 429, 503),
             summary="Inject a fault (no kind: a blind random one)",
             description="Breaks something on the tenant's network or in a customer's home. `kind` is one of "
             "router_frozen, wifi_interference, damaged_fibre, cut_street_cable, hub_link_backup, hub_link_down, "
             "evening_congestion, payment_failed; without it the lab draws one the target can suffer. Aim it with "
             "`customer` or `node` (not both); without either the lab draws a connected customer with no active "
             "fault. The kind and the true cause go to the lab's hidden truth; the answer has the fault id, the "
             "customer it was aimed at, and the network changes anyone can see (`visible`). Each node that went "
             "down is announced so netops warns the customers it reaches. 409 `fault_active`: that customer "
             "already has a fault; 422 `fault_not_applicable`: that kind cannot strike there; 404 "
             "`no_customers`: nobody is connected yet (seed the world: POST /v1/tenants/{t}/world).")
async def inject_fault(body: FaultBody, tenant: TenantDep, call: CallDep) -> FaultInjected:
    return await faults.inject_fault(call, kind=body.kind, customer=body.customer, node=body.node, seed=body.seed)


@router.get("/scoreboard", response_model=Answer[ScoreboardResult], responses=responses(401, 403, 422, 429, 503),
            summary="The grader: faults injected, diagnosed right, fixes proven",
            description="Every fault injected into the tenant, oldest first, against what the desk did: the "
            "tickets whose diagnosis was recorded while the fault struck their customer and what they say now "
            "(`diagnosed_right`: all of them name the fault's kind), whether a right action repaired it "
            "(`fixed`, `fixed_by`, `minutes_to_fix` on the lab's clock) and whether the customer was measured "
            "again after the repair (`fixed_proven`). For people, not for the agents.")
async def scoreboard(tenant: TenantDep, memory: MemoryDep) -> ScoreboardResult:
    return await lab.scoreboard(memory.client, tenant)
