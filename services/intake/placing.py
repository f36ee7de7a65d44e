"""Placing a customer's home from what they say in chat: the first address a customer gives puts
them on a line, so the resolver has something to measure.

When a customer with no line on file yet says where they live (a `lives_in` fact of the turn, or
a served city or area of the tenant's own list named anywhere in it: "I'm Meera from Chennai", then
filed as `lives_in` with the turn as its source), the turn's own words are placed (catalogue.place: the tenant's own cities and areas,
then the offline gazetteer, then the geocoder only when one is configured) and:

- served by this desk: the home is connected to a street cabinet of the nearest served area's
  exchange (usecases.customers.connect_home; the `lives_in` fact that triggered it has the turn as its source),
  and every ticket of the customer that waits for an address
  (ticket_work NEEDS_ADDRESS, handed to intake by the resolver) goes back to the resolver;
- no line there, or a place we do not know: the customer hears so honestly, nothing is connected;
- a customer with a line who says they live somewhere else now ("we moved to Mumbai last week") is
  placed again the same way: their old home box is no longer theirs, their line is the new one;
- served by another regional desk of the same operator (relay_graph.desk.customers.regional_desks): the case moves there
  by itself with its history (usecases.customers.move_case), the home is connected on that desk's network and
  its open tickets go to that desk's resolver; with no such desk the customer hears which desk
  serves the city. Here the resolver leaves the moved customer's tickets alone.

A separate module so that intake's reply composition stays its own: answer_turn calls `place_home`
once and adds the words it returns. It reads the desk and writes only through the use cases
(usecases.customers, usecases.ticket_opening, usecases.facts) on the turn's call."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from relay_graph.desk import catalogue
from relay_graph.desk.agent_reads import EpisodeView
from relay_graph.desk.catalogue.models import Placement, PlaceCandidate, PlacementSource, PlacementStatus
from relay_graph.desk.catalogue.regions import region_spec
from relay_graph.desk.conversation import templates as replies
from relay_graph.desk.customers import regional_desks as desks
from relay_graph.desk.network import homes
from relay_graph.desk.network import store as network
from relay_graph.desk.network.models import NodeKind
from relay_graph.memory.entities import name_key
from relay_graph.memory.models import FactInput, FactState, FactView
from relay_graph.runtime.errors import NotFound, RelayError
from relay_graph.usecases import customers as customer_cases, facts, ticket_opening
from relay_graph.usecases.context import Call, Deps

log = logging.getLogger("services.intake")

AGENT = "intake"


@dataclass
class Placed:
    status: str  # "connected", "moved", "no_line", "unknown", "elsewhere", "ambiguous"
    city: str | None = None
    area: str | None = None
    node_id: str | None = None
    tickets_back: list[str] = field(default_factory=list)
    moved_to: str | None = None  # the tenant of the desk the case moved to
    words: list[replies.Reply] = field(default_factory=list)


# A place name several places share ("London": England's, and Ontario's) means the one that is this
# many times as populous as every other, as people and geocoders read it; otherwise the desk asks.
DOMINANT_POPULATION = 10


def dominant_candidate(candidates: list[PlaceCandidate]) -> PlaceCandidate | None:
    ranked = sorted(candidates, key=lambda c: -(c.population or 0))
    if not ranked or not ranked[0].population:
        return None
    if all((c.population or 0) * DOMINANT_POPULATION <= ranked[0].population for c in ranked[1:]):
        return ranked[0]
    return None


def which_place(candidates: list[PlaceCandidate]) -> replies.Reply:
    shown = candidates[:4]
    countries = [c.country for c in shown]
    named = [f"{c.name}, {(c.admin1 + ', ') if c.admin1 and countries.count(c.country) > 1 else ''}"
             f"{c.country_name or c.country}" for c in shown]
    return replies.Reply(f"Which one do you mean: {' or '.join(named)}? Then I can find your line.",
                         [f"placement: {len(candidates)} places of that name"])


async def place_home(deps: Deps, call: Call, customer: str, turn: EpisodeView | None, text: str,
                     learnt: list[FactView]) -> Placed | None:
    """See the module doc. None when the turn names no new home, or the home it names is where the
    customer's line already is. A customer with a line who says they live somewhere else now (a
    current `lives_in` of this turn) is placed again: connected there (their old home box is no longer
    theirs), moved to the desk that serves it, or told there is no line there (the old line stays).
    Writes on `call` (the turn's); a case that moves desk is finished on a unit of work of that desk."""
    said_home = any(f.predicate == "lives_in" for f in learnt)
    # a home they live in now (not "I used to live in Pune"): only that moves a line they have
    moved_home = any(f.predicate == "lives_in" and f.state is FactState.CURRENT and f.valid_to is None for f in learnt)
    text = " ".join(text.split())[:500]  # one line: an address is not a paragraph
    if not text:
        return None
    line_city = await _line_city(call, customer)
    if line_city is not None and not moved_home:
        return None  # already on a line, and no new home in this turn
    region = await _desk_region(call)
    if region is None:
        return None  # no world seeded here: nothing to connect to
    placement = await catalogue.place(call.client, call.tenant, text, region=region)
    if line_city is not None and (placement.status is not PlacementStatus.SERVED
                                  or name_key(placement.city or "") == name_key(line_city)):
        # the home they named is where their line is, or not one we can place: the line stays
        return _no_line(placement, "move your connection there") if placement.status is PlacementStatus.NO_LINE else None
    if placement.status is PlacementStatus.AMBIGUOUS and said_home:
        dominant = dominant_candidate(placement.candidates)
        if dominant is None:
            return Placed("ambiguous", words=[which_place(placement.candidates)])
        placement = await catalogue.place(call.client, call.tenant, text, region=region, country=dominant.country)
    if not said_home and not await _file_home(call, customer, turn, placement, region):
        return None
    if placement.status is PlacementStatus.SERVED and placement.region not in (None, region):
        return await _move(deps, call, customer, text, placement)
    if placement.status is PlacementStatus.NO_LINE:
        near = f" The nearest city we serve is {placement.nearest_city}." if placement.nearest_city else ""
        return _no_line(placement, "connect or test a line there", near)
    if placement.status is not PlacementStatus.SERVED or not placement.city:
        return Placed(placement.status.value)
    return await _connect(call, customer, text, region, placement, line_city)


async def _file_home(call: Call, customer: str, turn: EpisodeView | None, placement: Placement, region: str) -> bool:
    """No `lives_in` in the words ("I'm Meera from Chennai", "my pin code is 560034"): only a city or
    area of our own list, or a postal code given as an address, counts, never a gazetteer guess at an
    ordinary word; then it is filed, with the turn as source. False: it does not count."""
    if placement.status is not PlacementStatus.SERVED or placement.source not in (
            PlacementSource.OWN_LIST, PlacementSource.POSTAL_CODE):
        return False
    if placement.region not in (None, region) or turn is None:
        return False
    await facts.write_facts(call, [FactInput(subject=customer, predicate="lives_in", object=placement.city,
                                             agent=AGENT, valid_from=turn.at, source=turn.episode_id)])
    return True


async def _connect(call: Call, customer: str, text: str, region: str, placement: Placement,
                   line_city: str | None) -> Placed:
    """A home this desk serves: connected, and the tickets that waited for the address go back."""
    try:
        home = await customer_cases.connect_home(call, customer, text, region=region)
    except RelayError as exc:  # no network in that city yet, or the text no longer places the same way
        log.info("customer %s not connected: %s", customer, exc)
        return Placed("unknown", city=placement.city)
    back = await ticket_opening.tickets_back_after_address(call, customer)
    where = f"{home.area}, {home.city}" if home.area else home.city
    said = (f"Thanks: I have moved your line from {line_city} to {where}." if line_city is not None
            else f"Thanks: I found your line in {where}.")
    return Placed("connected", city=home.city, area=home.area, node_id=home.node_id, tickets_back=back,
                  words=[replies.Reply(said, [f"network: home box {home.node_id} on cabinet {home.cabinet} ({where})"]
                                       + ([f"network: the line in {line_city} is no longer theirs"] if line_city else []))])


def _no_line(placement, cannot: str, then: str = "") -> Placed:
    """A place we have no line in, said honestly; nothing is connected (a line they have stays)."""
    where = placement.place or "that address"
    return Placed("no_line", words=[replies.Reply(
        f"I'm sorry: we have no line in {where}, so I cannot {cannot}.{then}",
        [f"placement: {where} is outside the area we serve"])])


async def _line_city(call: Call, customer: str) -> str | None:
    """The city of the customer's line (its exchange's), None when they have no line."""
    try:
        hops = await network.customer_line(call.client, call.tenant, customer)
    except NotFound:
        return None
    cities = [c for c in (homes.city_of_exchange(h.name) for h in hops if h.kind is NodeKind.OLT) if c]
    return cities[0] if cities else ("" if hops else None)


async def _move(deps: Deps, call: Call, customer: str, text: str, placement: Placement) -> Placed:
    """A city another regional desk of this operator serves: the case moves there by itself, with its
    history (case_move), the home is connected on that desk's network, and its open tickets go to
    that desk's resolver (a unit of work of that desk: what it owes is announced there); the customer
    repeats nothing. No such desk: said honestly."""
    spec = region_spec(placement.region)
    target = await desks.desk_for(call.client, call.tenant, spec.code)
    if target is None:
        return Placed("elsewhere", city=placement.city, words=[replies.Reply(
            f"{placement.city} is served by our {spec.desk}, not by this desk, so I cannot connect or test a line "
            "there from here.", [f"placement: {placement.city} is in the {spec.code} region"])])
    moved = await customer_cases.move_case(call, target, customer)
    async with deps.work(target, AGENT) as there:
        try:
            home = await customer_cases.connect_home(there, customer, text, region=spec.code)
        except RelayError as exc:
            log.info("customer %s moved to %s but not connected: %s", customer, target, exc)
            home = None
        back = await ticket_opening.hand_moved_tickets(there, customer, from_desk=region_spec(moved.from_region).desk)
    said = f" and ticket {', '.join(back)}" if back else ""
    return Placed("moved", city=placement.city, node_id=home.node_id if home else None, tickets_back=back,
                  moved_to=target, words=[replies.Reply(
                      f"{placement.city} is served by our {spec.desk}: I have moved your case there, with "
                      f"everything you have told us{said}, so you will not need to repeat anything.",
                      [f"case move {moved.move_id}: to the {spec.code} desk"])])


async def _desk_region(call: Call) -> str | None:
    seeded = sorted(await catalogue.seeded_regions(call.client, call.tenant))
    return seeded[0] if len(seeded) == 1 else None


__all__ = ["Placed", "dominant_candidate", "place_home", "which_place"]
