"""The access network of a tenant: building it, marking nodes up and down, finding who a fault
reaches, reading a customer's line from home to core, and outages with the tickets they cause.

Every mutation is one atomic statement; checks that can refuse a request run first, so a refused
request changes nothing. Customers are the same `Entity:Customer` nodes the facts module makes,
keyed by `entity_uid("Customer", name_key(name))`."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from relay_graph.runtime.times import from_ms, ms_of
from relay_graph.runtime.db import GraphClient
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.runtime.errors import InvalidInput, InvalidValue, NotFound, StateConflict
from relay_graph.memory.models import aware, utcnow
from relay_graph.desk.network.models import (
    ACCESS_KINDS,
    HOME_BOX,
    LINK_ENDPOINTS,
    MAX_NODE_NAME,
    check_node_id,
    AffectedCustomer,
    Attachment,
    CityStatus,
    LineHop,
    LinkIn,
    LinkStatusChange,
    LinkType,
    NetNode,
    NetNodeIn,
    NodeKind,
    NodeStatusChange,
    Outage,
    PathFault,
    UpsertResult,
)
from relay_graph.desk.network.graph import load_upward, served_nodes
from relay_graph.desk.queries import network as q
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.tenancy import validate_tenant
from relay_graph.desk.tickets.models import TicketStage

# Ticket stages that no longer take new causes (the tickets module owns the stage names).
CLOSED_TICKET_STAGES: tuple[str, ...] = (TicketStage.CLOSED.value,)
MAX_BATCH = 5_000


def _ms(at: datetime | None) -> int:
    return ms_of(aware(at) or utcnow())


def home_box_name(customer: str) -> str:
    """The home box's node name, within a node name's 200 characters for any customer name."""
    return f"{customer[:MAX_NODE_NAME - len(HOME_BOX)]}{HOME_BOX}"


def customer_identity(name: object) -> tuple[str, str, str]:
    """(clean name, name_key, uid) of a customer name."""
    text = clean_text(name, "customer")
    key = name_key(text)
    if not key:
        raise InvalidValue("customer name has no letters or digits")  # its normal form is empty
    return text, key, entity_uid("Customer", key)


def _batch(items: list, what: str) -> None:
    if not items:
        return
    if len(items) > MAX_BATCH:
        raise InvalidInput(f"at most {MAX_BATCH} {what} per call")


async def _kinds(client: GraphClient, tenant: str, ids: list[str]) -> dict[str, NodeKind]:
    rows = await client.run(tenant, q.NODE_KINDS, {"ids": sorted(set(ids))})
    return {r["node_id"]: NodeKind(r["kind"]) for r in rows}


def _to_node(props: dict[str, Any]) -> NetNode:
    return NetNode(
        node_id=props["node_id"],
        kind=NodeKind(props["kind"]),
        name=props.get("name") or props["node_id"],
        capacity_gbps=float(props.get("capacity_gbps") or 0.0),
        status=props.get("status") or "up",
        version=int(props.get("version") or 0),
    )


# ---------------------------------------------------------------- building


async def upsert_nodes(client: GraphClient, tenant: str, nodes: list[NetNodeIn]) -> UpsertResult:
    """Create or update nodes by node_id. Name and capacity follow the input; kind is fixed at
    creation (changing it is refused) and status is set only at creation (see set_node_status)."""
    validate_tenant(tenant)
    _batch(nodes, "nodes")
    if not nodes:
        return UpsertResult(created=0, updated=0)
    seen: set[str] = set()
    for n in nodes:
        if n.node_id in seen:
            raise InvalidInput(f"node {n.node_id!r} appears twice in one batch")
        seen.add(n.node_id)
    existing = await _kinds(client, tenant, list(seen))
    clash = [f"{n.node_id} is a {existing[n.node_id].value}, not a {n.kind.value}"
             for n in nodes if n.node_id in existing and existing[n.node_id] is not n.kind]
    if clash:
        raise StateConflict("a node's kind cannot change: " + "; ".join(clash[:5]), code="node_kind_conflict")
    rows = [
        {"node_id": n.node_id, "kind": n.kind.value, "name": clean_text(n.name, "name"),
         "capacity_gbps": float(n.capacity_gbps), "up": n.up}
        for n in nodes
    ]
    res = await client.run(tenant, q.UPSERT_NODES, {"nodes": rows})
    created = int(res[0]["created"] or 0) if res else 0
    total = int(res[0]["total"] or 0) if res else 0
    if total != len(rows):
        raise StateConflict("another writer changed these nodes; retry", code="node_kind_conflict")
    return UpsertResult(created=created, updated=total - created)


async def upsert_links(client: GraphClient, tenant: str, links: list[LinkIn]) -> UpsertResult:
    """Create or update links, stored as (source)-[:type]->(target). Both ends must exist and the
    kinds must fit LINK_ENDPOINTS; a link that would close a loop towards the core is refused.
    `up` is set only at creation (see set_link_status); capacity and length follow the input."""
    validate_tenant(tenant)
    _batch(links, "links")
    if not links:
        return UpsertResult(created=0, updated=0)
    keys: set[tuple[str, str, str]] = set()
    for link in links:
        if link.source == link.target:
            raise InvalidInput(f"link {link.source} -> {link.target} joins a node to itself")
        key = (link.type.value, link.source, link.target)
        if key in keys:
            raise InvalidInput(f"link {link.type.value} {link.source} -> {link.target} appears twice in one batch")
        keys.add(key)
    kinds = await _kinds(client, tenant, [x for link in links for x in (link.source, link.target)])
    missing = sorted({x for link in links for x in (link.source, link.target)} - set(kinds))
    if missing:
        raise NotFound(f"unknown network node(s): {', '.join(missing[:10])}", code="node_not_found")
    for link in links:
        sources, targets = LINK_ENDPOINTS[link.type]
        s, t = kinds[link.source], kinds[link.target]
        if s not in sources or t not in targets:
            raise InvalidInput(
                f"a {link.type.value} link joins {sorted(k.value for k in sources)} to "
                f"{sorted(k.value for k in targets)}; {link.source} is a {s.value}, {link.target} a {t.value}",
                code="invalid_link",
            )
    await _refuse_loops(client, tenant, [link for link in links if link.type is not LinkType.DROP])
    rows = [
        {"type": link.type.value, "source": link.source, "target": link.target,
         "capacity_gbps": link.capacity_gbps, "length_m": link.length_m, "up": link.up, "backup": link.backup}
        for link in links
    ]
    res = await client.run(tenant, q.UPSERT_LINKS, {"links": rows})
    created = int(res[0]["created"] or 0) if res else 0
    total = int(res[0]["total"] or 0) if res else 0
    return UpsertResult(created=created, updated=total - created)


async def _refuse_loops(client: GraphClient, tenant: str, links: list[LinkIn]) -> None:
    """A loop of upward links would put a node behind itself. Existing upward links are acyclic,
    so a new loop must run through a new link and consists only of nodes above its ends."""
    if not links:
        return
    ends = sorted({x for link in links for x in (link.source, link.target)})
    up: dict[str, set[str]] = {}
    for row in await client.run(tenant, q.UPWARD_PATHS, {"ids": ends}):
        ids = row["ids"]
        for a, b in zip(ids, ids[1:]):
            up.setdefault(a, set()).add(b)
    for link in links:
        up.setdefault(link.source, set()).add(link.target)
    state: dict[str, int] = {}  # 1 on the stack, 2 done

    def visit(start: str) -> None:
        stack = [(start, iter(sorted(up.get(start, ()))))]
        state[start] = 1
        while stack:
            node, children = stack[-1]
            nxt = next(children, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                raise InvalidInput(f"link into {nxt} would close a loop towards the core", code="invalid_link")
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(sorted(up.get(nxt, ())))))

    for node in sorted(up):
        if node not in state:
            visit(node)


async def attach_customers(client: GraphClient, tenant: str, pairs: list[tuple[str, str]]) -> list[Attachment]:
    """Connect customers (by name) to the ONT (or OLT) their home hangs off, creating the customer
    entity if needed. A customer has one line: attaching elsewhere moves them."""
    validate_tenant(tenant)
    _batch(pairs, "customers")
    rows, uids = [], set()
    for name, node_id in pairs:
        text, key, uid = customer_identity(name)
        if uid in uids:
            raise InvalidInput(f"customer {text!r} appears twice in one batch")
        uids.add(uid)
        rows.append({"name": text, "name_key": key, "uid": uid, "node_id": check_node_id(node_id)})
    if not rows:
        return []
    kinds = await _kinds(client, tenant, [r["node_id"] for r in rows])
    for r in rows:
        kind = kinds.get(r["node_id"])
        if kind is None:
            raise NotFound(f"unknown network node {r['node_id']!r}", code="node_not_found")
        if kind not in ACCESS_KINDS:
            raise InvalidInput(
                f"customers connect to an {' or '.join(sorted(k.value for k in ACCESS_KINDS))}; "
                f"{r['node_id']} is a {kind.value}",
                code="invalid_link",
            )
    res = await client.run(tenant, q.ATTACH_CUSTOMERS,
                           {"rows": rows, "access_kinds": sorted(k.value for k in ACCESS_KINDS)})
    if len(res) != len(rows):
        raise StateConflict("a network node changed while customers were attached; retry")
    out = {r["uid"]: Attachment(customer=r["customer"], uid=r["uid"], node_id=r["node_id"],
                                previous=sorted(set(r["previous"]))) for r in res}
    return [out[r["uid"]] for r in rows]


# ---------------------------------------------------------------- status


async def get_node(client: GraphClient, tenant: str, node_id: str) -> NetNode:
    validate_tenant(tenant)
    rows = await client.run(tenant, q.GET_NODE, {"node_id": check_node_id(node_id)})
    if not rows:
        raise NotFound(f"unknown network node {node_id!r}", code="node_not_found")
    return _to_node(rows[0]["n"])


async def set_node_status(
    client: GraphClient, tenant: str, node_id: str, *, up: bool, at: datetime | None = None
) -> NodeStatusChange:
    """Mark a node up (Up label, status 'up') or down. Setting the status it already has changes
    nothing (changed False, same version); a change increments the node's version."""
    validate_tenant(tenant)
    query = q.SET_NODE_UP if up else q.SET_NODE_DOWN
    rows = await client.run(tenant, query, {"node_id": check_node_id(node_id), "at_ms": _ms(at)})
    if not rows:
        raise NotFound(f"unknown network node {node_id!r}", code="node_not_found")
    return NodeStatusChange(node_id=node_id, up=up, changed=bool(rows[0]["changed"]),
                            version=int(rows[0]["version"]))


async def set_link_status(
    client: GraphClient, tenant: str, link_type: LinkType, source: str, target: str, *, up: bool,
    at: datetime | None = None,
) -> LinkStatusChange:
    """A link-level fault (a cut fibre): the `up` property of one link."""
    validate_tenant(tenant)
    link_type = LinkType(link_type)
    rows = await client.run(tenant, q.SET_LINK_STATUS[link_type],
                            {"source": check_node_id(source), "target": check_node_id(target), "up": up, "at_ms": _ms(at)})
    if not rows:
        raise NotFound(f"no {link_type.value} link {source} -> {target}", code="link_not_found")
    return LinkStatusChange(type=link_type, source=source, target=target, up=up, changed=bool(rows[0]["changed"]))


# ---------------------------------------------------------------- reading


def _city_status(r: dict) -> CityStatus:
    # network_gen names a city's hub "<city> hub"
    name = str(r["name"] or r["hub"])
    city = name[: -len(" hub")] if name.endswith(" hub") else name
    if r["hub_down"]:
        return CityStatus(city=city, hub=r["hub"], status="outage", reason="the city hub is down")
    if r["uplinks"] and r["uplinks_down"] >= r["uplinks"]:
        return CityStatus(city=city, hub=r["hub"], status="outage", reason="every uplink of the city hub is down")
    if r["uplinks_down"]:
        return CityStatus(city=city, hub=r["hub"], status="degraded",
                          reason="the city hub runs on its standby uplink")
    n = int(r["below_down"])
    return CityStatus(city=city, hub=r["hub"], status="degraded",
                      reason=f"{n} exchange, cabinet or link{'s' if n != 1 else ''} below the city hub down")


async def degraded_cities(client: GraphClient, tenant: str) -> list[CityStatus]:
    """The served cities whose network is short of normal now, by city name."""
    validate_tenant(tenant)
    return [_city_status(r) for r in await client.run(tenant, q.DEGRADED_HUBS)]



async def _behind_rows(client: GraphClient, tenant: str, node_id: str, depth: int | None) -> list[dict]:
    """customers_behind's rows ({customer, uid, hops, path}), one per customer, sorted by name."""
    validate_tenant(tenant)
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int) or depth < 0):
        raise InvalidInput("depth must be a whole number >= 0")
    query = q.CUSTOMERS_BEHIND[depth if depth is not None and depth <= q.MAX_BOUNDED_DEPTH else None]
    rows = await client.run(tenant, query, {"node_id": check_node_id(node_id), "depth": depth})
    if not rows:
        raise NotFound(f"unknown network node {node_id!r}", code="node_not_found")
    best: dict[str, dict] = {}
    for r in rows[0]["rows"]:
        cur = best.get(r["uid"])
        if cur is None or (r["hops"], r["path"]) < (cur["hops"], cur["path"]):
            best[r["uid"]] = r
    return sorted(best.values(), key=lambda r: (r["customer"], r["uid"]))


def _affected(r: dict) -> AffectedCustomer:
    return AffectedCustomer(customer=r["customer"], path=list(r["path"]))


async def customers_behind(
    client: GraphClient, tenant: str, node_id: str, depth: int | None = None
) -> list[AffectedCustomer]:
    """Every customer with a line to the core through the node, over any of their paths (a standby
    uplink counts: see affected_customers for who a fault of the node actually cuts off), each with
    the shortest path of node ids from their access node up to this node. `depth` counts network
    links below the node (the customer's own CONNECTED_VIA is not a hop): an ONT's customers are at
    0, a splitter's at 1, an OLT's at 2, a POP's at 3. None looks all the way down. Sorted by
    customer name."""
    return [_affected(r) for r in await _behind_rows(client, tenant, node_id, depth)]


async def _cut_off(client: GraphClient, tenant: str, node_id: str, rows: list[dict]) -> list[dict]:
    """The rows whose access node no longer reaches the core with `node_id` down (on top of whatever
    is down already): every path they have runs through it or through a node or link that is down.
    The same reachability as network_algorithms.failure_reach (both on network_graph)."""
    if not rows:
        return []
    g = await load_upward(client, tenant, [r["path"][0] for r in rows])
    served = served_nodes(g, avoid=frozenset({node_id}))
    return [r for r in rows if r["path"][0] not in served or r["path"][0] == node_id]


async def affected_customers(
    client: GraphClient, tenant: str, node_id: str, depth: int | None = None
) -> list[AffectedCustomer]:
    """Who a fault of the node reaches: the customers behind it (customers_behind: same depth rule,
    same paths) whose every path up to the core, with the node down, runs through a node or link
    that is down. Someone still served another way (their primary when a standby's hub fails, a
    standby when the primary fails: slower perhaps, see network_algorithms.capacity) is not
    affected. For a node that is down this is who its outage reaches; for one that is up, who it
    would reach if it failed now."""
    rows = await _behind_rows(client, tenant, node_id, depth)
    return [_affected(r) for r in await _cut_off(client, tenant, node_id, rows)]


async def customer_line(client: GraphClient, tenant: str, customer: str) -> list[LineHop]:
    """The customer's path from home to core: access node (ONT), splitter, OLT, POP, backbone, each
    with status and capacity and the state of the link above it. Empty when the customer is known
    but not connected; NotFound when no such customer exists."""
    validate_tenant(tenant)
    _, _, uid = customer_identity(customer)
    rows = await client.run(tenant, q.CUSTOMER_LINE, {"uid": uid})
    if not rows:
        raise NotFound(f"unknown customer {customer!r}", code="customer_not_found")
    lines: list[tuple[list[LineHop], bool]] = []
    for r in rows:
        access = r["access"]
        if access is None:
            continue
        nodes: list[dict] = list(r["nodes"] or []) or [access]
        links: list[dict] = list(r["links"] or [])
        if r["drop"] is not None:
            nodes, links = [access] + nodes, [r["drop"]] + links
        hops = []
        for i, props in enumerate(nodes):
            node = _to_node(props)
            link = links[i] if i < len(links) else None
            hops.append(LineHop(
                node_id=node.node_id, kind=node.kind, name=node.name, status=node.status,
                capacity_gbps=node.capacity_gbps,
                link_type=None if link is None else LinkType(link["type"]),
                link_up=None if link is None else link["up"] is not False,
                link_capacity_gbps=None if link is None or link["capacity_gbps"] is None
                else float(link["capacity_gbps"]),
            ))
        lines.append((hops, any(bool(x.get("backup")) for x in links)))
    if not lines:
        return []
    return min(lines, key=lambda line: route_rank(*line))[0]


def route_rank(hops: list[LineHop], standby: bool) -> tuple:
    """Which of a customer's lines the network uses now, as the lab's line test picks it
    (lab.line.line_view): one reaching the core over working nodes and links on primary uplinks,
    else over a standby that carries the traffic, else the nominal primary, else any; then the
    fewest hops, then node ids from the home up. Showing the standby while the primary works would
    name a path no packet takes."""
    working = all(h.status != "down" for h in hops) and all(h.link_up is not False for h in hops)
    tier = (0 if not standby else 1) if working else (2 if not standby else 3)
    return (hops[-1].kind is not NodeKind.BACKBONE, tier, len(hops), [h.node_id for h in hops])


# ---------------------------------------------------------------- outages


def _outage(props: dict, node_kind: str, node_name: str | None, customers: list[str], count: int,
            created: bool = False) -> Outage:
    return Outage(
        outage_id=props["outage_id"],
        node_id=props["node_id"],
        node_kind=NodeKind(node_kind),
        node_name=node_name or props["node_id"],
        cause=props.get("cause") or "",
        open=bool(props.get("open")),
        opened_at=from_ms(props["opened_at_ms"]),
        closed_at=from_ms(props.get("closed_at_ms")),
        customers=sorted(customers),
        affected_count=count,
        created=created,
    )


async def get_outage(client: GraphClient, tenant: str, outage_id: str, *, created: bool = False) -> Outage:
    """The outage with every affected customer's name (staff and agents' view)."""
    validate_tenant(tenant)
    if not isinstance(outage_id, str) or not outage_id or len(outage_id) > 128:
        raise InvalidInput("outage id must be a non-empty string of at most 128 characters")
    rows = await client.run(tenant, q.OUTAGE_VIEW, {"outage_id": outage_id})
    if not rows:
        raise NotFound(f"unknown outage {outage_id!r}", code="outage_not_found")
    r = rows[0]
    names = list(r["customers"])
    return _outage(r["o"], r["node_kind"], r["node_name"], names, len(names), created)


async def open_outage(
    client: GraphClient, tenant: str, node_id: str, *, cause: str, at: datetime | None = None
) -> Outage:
    """Open the node's outage, or return the one already open (created False). It AFFECTS the node
    and the customers it cuts off (affected_customers, all depths): not those a standby uplink or
    their primary still serves. Customers attached or cut off since an earlier call are added;
    nobody is removed (they were told)."""
    validate_tenant(tenant)
    cause = clean_text(cause, "cause")
    node_id = check_node_id(node_id)
    cut = await _cut_off(client, tenant, node_id, await _behind_rows(client, tenant, node_id, None))
    outage_id = "out-" + uuid.uuid4().hex[:16]
    rows = await client.run(tenant, q.OPEN_OUTAGE,
                            {"node_id": node_id, "outage_id": outage_id, "at_ms": _ms(at), "cause": cause,
                             "uids": [r["uid"] for r in cut]})
    if not rows:
        raise NotFound(f"unknown network node {node_id!r}", code="node_not_found")
    return await get_outage(client, tenant, rows[0]["outage_id"], created=bool(rows[0]["created"]))


async def close_outage(client: GraphClient, tenant: str, node_id: str, at: datetime | None = None) -> Outage | None:
    """Close the node's open outage; None when none is open (closing twice is harmless)."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.CLOSE_OUTAGE, {"node_id": check_node_id(node_id), "at_ms": _ms(at)})
    if not rows:
        raise NotFound(f"unknown network node {node_id!r}", code="node_not_found")
    closed = rows[0]["closed"]
    if not closed:
        return None
    return await get_outage(client, tenant, sorted(closed)[0])


async def open_outages_for_customer(client: GraphClient, tenant: str, customer: str) -> list[Outage]:
    """Open outages that reach this customer, oldest first. `customers` holds only this customer:
    who else is affected is not theirs to read (affected_count gives the size)."""
    validate_tenant(tenant)
    _, _, uid = customer_identity(customer)
    rows = await client.run(tenant, q.OPEN_OUTAGES_FOR_CUSTOMER, {"uid": uid})
    if not rows:
        raise NotFound(f"unknown customer {customer!r}", code="customer_not_found")
    out = [_outage(r["o"], r["node_kind"], r["node_name"], [r["customer"]], int(r["affected_count"]))
           for r in rows if r["o"] is not None]
    return sorted(out, key=lambda o: (o.opened_at, o.outage_id))


async def path_faults(client: GraphClient, tenant: str, customer: str) -> list[PathFault]:
    """The nodes on the customer's line (customer_line: the path the network uses now) that are
    down or degraded, home side first, each with its open outage; empty for an unknown or
    unconnected customer."""
    try:
        hops = await customer_line(client, tenant, customer)
    except NotFound:
        return []
    ids = [h.node_id for h in hops if h.status != "up"]
    if not ids:
        return []
    rows = {r["node_id"]: r for r in await client.run(tenant, q.PATH_FAULTS, {"node_ids": ids})}
    out = []
    for nid in ids:
        r = rows.get(nid)
        if r is None:
            continue
        o = r["o"]
        out.append(PathFault(
            node_id=nid, node_kind=NodeKind(r["node_kind"]), node_name=r["node_name"] or nid, status=r["status"],
            since=from_ms(r["since_ms"]),
            outage=_outage(o, r["node_kind"], r["node_name"], [], int(r["affected_count"] or 0)) if o else None))
    return out


async def link_ticket_to_outage(client: GraphClient, tenant: str, ticket_id: str, outage_id: str) -> bool:
    """Point one ticket at an outage (CAUSED_BY, idempotent); False when either is not here."""
    validate_tenant(tenant)
    rows = await client.run(tenant, q.LINK_TICKET, {"ticket_id": ticket_id, "outage_id": outage_id})
    return bool(rows)


async def link_tickets_to_outage(client: GraphClient, tenant: str, outage_id: str) -> list[str]:
    """Point every open ticket (stage not closed) of an affected customer at the outage
    (CAUSED_BY, idempotent). Returns the ids of all open tickets now linked, sorted."""
    validate_tenant(tenant)
    if not isinstance(outage_id, str) or not outage_id or len(outage_id) > 128:
        raise InvalidInput("outage id must be a non-empty string of at most 128 characters")
    rows = await client.run(tenant, q.LINK_TICKETS,
                            {"outage_id": outage_id, "closed_stages": list(CLOSED_TICKET_STAGES)})
    if not rows:
        raise NotFound(f"unknown outage {outage_id!r}", code="outage_not_found")
    return sorted(t for t in rows[0]["tickets"] if t is not None)
