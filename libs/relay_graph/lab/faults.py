"""Injecting faults: choose a target, make what is physically visible visible on the tenant's network
(a cabinet that loses power is down, a cut cable is a link down), and write everything else (the
kind, the true cause, the proper fix, hidden states such as a frozen box) only to the truth graph."""

from __future__ import annotations

import random
import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from relay_graph.runtime.times import ms_of
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.errors import InvalidInput, NotFound, StateConflict
from relay_graph.memory.inputs import check_identifier
from relay_graph.memory.models import aware, utcnow
from relay_graph.desk.network.store import check_node_id, customers_behind, get_node, set_link_status, set_node_status
from relay_graph.desk.network.graph import LinkView, load_upward, served_nodes
from relay_graph.desk.network.models import LinkType, NodeKind
from relay_graph.lab.queries import lab as q
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.lab import truth
from relay_graph.lab.line import Context, context
from relay_graph.lab.models import FIX_FOR, FaultKind, Injection, NETWORK_KINDS, VisibleChange
from relay_graph.lab.physics import profile

CUSTOMER_KINDS = (FaultKind.ROUTER_FROZEN, FaultKind.WIFI_INTERFERENCE, FaultKind.DAMAGED_FIBRE,
                  FaultKind.PAYMENT_FAILED)
MAX_DRAWS = 200  # customers tried when drawing a blind target


@dataclass(frozen=True)
class Plan:
    kind: FaultKind
    effect: str  # hidden, node_down, link_down
    cause: str
    customer: str | None = None
    uid: str | None = None
    node_id: str | None = None
    link: LinkView | None = None

    @property
    def target(self) -> str | None:
        if self.link is not None:
            return f"{self.link.source}->{self.link.target}"
        return self.node_id


def _kind(kind: object) -> FaultKind | None:
    if kind is None:
        return None
    try:
        return FaultKind(kind)
    except ValueError:
        raise InvalidInput(f"unknown fault kind {kind!r}; one of {', '.join(k.value for k in FaultKind)}",
                           code="unknown_fault_kind") from None


def _rng(seed: object) -> random.Random:
    if seed is None:
        return random.Random(secrets.randbits(64))
    if isinstance(seed, bool) or not isinstance(seed, (int, str)):
        raise InvalidInput("seed must be a whole number or a string")
    return random.Random(str(seed) if isinstance(seed, int) else check_identifier(seed, "seed"))


def _uplink_plans(ctx_graph, holder: str, links: list[LinkView], cause_of) -> list[Plan]:
    """Taking each uplink down: does `holder` still reach a backbone, and then only over a standby
    link (LinkIn.backup)? A link whose loss leaves a primary path (a standby going down, or
    redundancy nobody marked as standby) changes nothing a line test shows: not one of our faults."""
    plans = []
    for link in links:
        gone = frozenset({link.key})
        still = holder in served_nodes(ctx_graph, avoid_links=gone)
        if still and holder in served_nodes(ctx_graph, avoid_links=gone, primary_only=True):
            continue
        kind = FaultKind.HUB_LINK_BACKUP if still else FaultKind.HUB_LINK_DOWN
        plans.append(Plan(kind=kind, effect="link_down", link=link, cause=cause_of(link, still)))
    return plans


def _uplink_cause(link: LinkView, still: bool) -> str:
    tail = "a standby uplink carries the traffic at reduced capacity" if still else "there is no standby uplink"
    return f"the uplink {link.source} -> {link.target} is down; {tail}"


def customer_plans(tenant: str, ctx: Context) -> list[Plan]:
    """Every fault this customer's line can suffer now."""
    who = {"customer": ctx.name, "uid": ctx.uid}
    plans = [Plan(kind=FaultKind.PAYMENT_FAILED, effect="hidden",
                  cause="the last payment failed and billing suspended the account", **who)]
    line, g = ctx.line, ctx.graph
    if not line.connected:
        return plans
    healthy = line.reaches_core and line.lit and line.ont_up
    if ctx.access_kind is NodeKind.ONT and healthy:
        ch = profile(tenant, ctx.uid).channel
        plans += [
            Plan(kind=FaultKind.ROUTER_FROZEN, effect="hidden", node_id=ctx.access,
                 cause=f"the home box {ctx.access} froze and stopped answering", **who),
            Plan(kind=FaultKind.WIFI_INTERFERENCE, effect="hidden", node_id=ctx.access,
                 cause=f"neighbouring networks crowd the home's Wi-Fi channel {ch}", **who),
            Plan(kind=FaultKind.DAMAGED_FIBRE, effect="hidden", node_id=ctx.access,
                 cause=f"the fibre inside the home at {ctx.access} is cracked and loses most of the light", **who),
        ]
    if ctx.access_kind is NodeKind.ONT and healthy:
        for link in g.links:
            if link.type is LinkType.DROP and link.target == ctx.access and g.working(link):
                plans.append(Plan(kind=FaultKind.CUT_STREET_CABLE, effect="link_down", link=link, **who,
                                  cause=f"the drop cable from cabinet {link.source} to {link.target} is cut"))
                plans.append(Plan(kind=FaultKind.CUT_STREET_CABLE, effect="node_down", node_id=link.source, **who,
                                  cause=f"street cabinet {link.source} lost power"))
    if line.reaches_core:
        pairs = set(zip(line.route, line.route[1:]))
        ups = [x for x in g.links if x.type is LinkType.UPLINK and g.working(x) and (x.source, x.target) in pairs]
        plans += [Plan(**{**p.__dict__, **who}) for p in _uplink_plans(g, ctx.access, ups, _uplink_cause)]
        if line.hub is not None and g.nodes[line.hub].up:
            plans.append(Plan(kind=FaultKind.EVENING_CONGESTION, effect="hidden", node_id=line.hub, **who,
                              cause=f"hub {line.hub} runs out of capacity in the evening peak"))
    return plans


async def node_plans(client: GraphClient, tenant: str, node_id: str) -> list[Plan]:
    """Network faults that strike at this node itself."""
    node = await get_node(client, tenant, node_id)
    g = await load_upward(client, tenant, [node_id])
    if node.status != "up":
        return []
    plans: list[Plan] = []
    if node.kind is NodeKind.SPLITTER:
        plans.append(Plan(kind=FaultKind.CUT_STREET_CABLE, effect="node_down", node_id=node_id,
                          cause=f"street cabinet {node_id} lost power"))
    elif node.kind is NodeKind.ONT:
        for link in g.links:
            if link.type is LinkType.DROP and link.target == node_id and g.working(link):
                plans.append(Plan(kind=FaultKind.CUT_STREET_CABLE, effect="link_down", link=link,
                                  cause=f"the drop cable from cabinet {link.source} to {link.target} is cut"))
    elif node.kind in (NodeKind.POP, NodeKind.OLT) and node_id in served_nodes(g):
        ups = [x for x in g.links if x.type is LinkType.UPLINK and x.source == node_id and g.working(x)]
        plans += _uplink_plans(g, node_id, ups, _uplink_cause)
        if node.kind is NodeKind.POP:
            plans.append(Plan(kind=FaultKind.EVENING_CONGESTION, effect="hidden", node_id=node_id,
                              cause=f"hub {node_id} runs out of capacity in the evening peak"))
    return plans


def _prefer_hubs(plans: list[Plan], g_kinds: dict[str, NodeKind]) -> list[Plan]:
    """A "hub link" is a hub's own uplink where there is one to choose, else an exchange's."""
    hub_links = [p for p in plans if p.kind in (FaultKind.HUB_LINK_BACKUP, FaultKind.HUB_LINK_DOWN)
                 and p.link is not None and g_kinds.get(p.link.source) is NodeKind.POP]
    others = [p for p in plans if p.kind not in (FaultKind.HUB_LINK_BACKUP, FaultKind.HUB_LINK_DOWN)]
    for kind in (FaultKind.HUB_LINK_BACKUP, FaultKind.HUB_LINK_DOWN):
        mine = [p for p in hub_links if p.kind is kind] or [p for p in plans if p.kind is kind]
        others += mine
    return others


def _pick(plans: list[Plan], kind: FaultKind | None, rng: random.Random) -> Plan | None:
    plans = sorted(plans, key=lambda p: (p.kind.value, p.effect, p.target or "", p.customer or ""))
    if kind is not None:
        plans = [p for p in plans if p.kind is kind]
        return rng.choice(plans) if plans else None
    if not plans:
        return None
    kinds = sorted({p.kind for p in plans}, key=lambda k: k.value)
    chosen = rng.choice(kinds)  # every feasible kind equally likely, whatever the number of targets
    return rng.choice([p for p in plans if p.kind is chosen])


async def _customer_plan(client, tenant, customer, kind, rng, *, refuse_busy: bool,
                         only: frozenset[FaultKind] | None = None) -> Plan | None:
    ctx = await context(client, tenant, customer)
    if ctx.faults:
        if refuse_busy:
            raise StateConflict(f"customer {ctx.name!r} already has an active fault; fix it first",
                                code="fault_active")
        return None
    if not ctx.line.connected and kind is not FaultKind.PAYMENT_FAILED:
        if refuse_busy:
            raise InvalidInput(f"customer {ctx.name!r} has no line to break", code="fault_not_applicable")
        return None
    plans = [p for p in customer_plans(tenant, ctx) if only is None or p.kind in only]
    return _pick(_prefer_hubs(plans, {n: v.kind for n, v in ctx.graph.nodes.items()}), kind, rng)


async def _apply(client: GraphClient, tenant: str, plan: Plan, at: datetime, *, up: bool) -> list[VisibleChange]:
    if plan.effect == "node_down":
        change = await set_node_status(client, tenant, plan.node_id, up=up, at=at)
        return [VisibleChange(node_id=plan.node_id, up=up, version=change.version)] if change.changed else []
    if plan.effect == "link_down":
        link = plan.link
        change = await set_link_status(client, tenant, link.type, link.source, link.target, up=up, at=at)
        return ([VisibleChange(link_type=link.type.value, source=link.source, target=link.target, up=up)]
                if change.changed else [])
    return []


async def restore(client: GraphClient, tenant: str, fault: dict[str, Any], at: datetime) -> list[VisibleChange]:
    """Undo a repaired fault's visible effect."""
    link = None
    if fault.get("link_type"):
        link = LinkView(type=LinkType(fault["link_type"]), source=fault["link_source"], target=fault["link_target"])
    plan = Plan(kind=FaultKind(fault["kind"]), effect=fault.get("effect") or "hidden", cause="",
                node_id=fault.get("node_id"), link=link)
    return await _apply(client, tenant, plan, at, up=True)


async def inject(
    client: GraphClient,
    tenant: str,
    *,
    kind: FaultKind | str | None = None,
    customer: str | None = None,
    node: str | None = None,
    seed: int | str | None = None,
    at: datetime | None = None,
) -> Injection:
    """Inject a fault. `kind` None draws one (seeded) among those the target can suffer; no
    `customer` and no `node` draws a customer with no active fault. A customer who already has
    an active fault is refused (one fault at a time keeps the grading honest), as is a kind the
    target cannot suffer. Returns the fault id and the network changes anyone can now see."""
    validate_tenant(tenant)
    want = _kind(kind)
    rng = _rng(seed)
    at = aware(at) or utcnow()
    plan: Plan | None = None
    if customer is not None and node is not None:
        raise InvalidInput("give a customer or a node, not both")
    if customer is not None:
        plan = await _customer_plan(client, tenant, customer, want, rng, refuse_busy=True)
    elif node is not None:
        node = check_node_id(node)
        plans = []
        if want is None or want in NETWORK_KINDS:
            plans = await node_plans(client, tenant, node)
        if want is None or want not in NETWORK_KINDS:
            behind = [a.customer for a in await customers_behind(client, tenant, node)]
            if behind:
                pick = await _customer_plan(client, tenant, rng.choice(behind), want, rng, refuse_busy=False,
                                            only=frozenset(CUSTOMER_KINDS))
                plans += [pick] if pick is not None else []
        plan = _pick(plans, want, rng)
    else:
        pool = [r["customer"] for r in await client.run(tenant, q.CONNECTED_CUSTOMERS)]
        rng.shuffle(pool)
        for name in pool[:MAX_DRAWS]:
            plan = await _customer_plan(client, tenant, name, want, rng, refuse_busy=False)
            if plan is not None:
                break
        if not pool:
            raise NotFound("no connected customer to aim a fault at", code="no_customers")
    if plan is None:
        what = f"a {want.value} fault" if want else "any fault"
        raise InvalidInput(f"{what} cannot strike that target now", code="fault_not_applicable")

    visible = await _apply(client, tenant, plan, at, up=False)
    fault_id = "flt-" + uuid.uuid4().hex[:16]
    link = plan.link
    await truth.record_fault(client, tenant, {
        "fault_id": fault_id, "kind": plan.kind.value, "effect": plan.effect, "network": plan.kind in NETWORK_KINDS,
        "customer": plan.customer, "customer_uid": plan.uid, "node_id": plan.node_id,
        "link_type": link.type.value if link else None, "link_source": link.source if link else None,
        "link_target": link.target if link else None, "target": plan.target, "started_at_ms": ms_of(at),
        "true_cause": plan.cause, "proper_fix": FIX_FOR[plan.kind].value,
        "seed": None if seed is None else str(seed),
    })
    return Injection(fault_id=fault_id, customer=plan.customer, visible=visible)


async def inject_fault(
    client: GraphClient,
    tenant: str,
    *,
    kind: FaultKind | str | None = None,
    customer: str | None = None,
    node: str | None = None,
    seed: int | str | None = None,
    at: datetime | None = None,
) -> str:
    """inject(), returning only the fault id."""
    return (await inject(client, tenant, kind=kind, customer=customer, node=node, seed=seed, at=at)).fault_id
