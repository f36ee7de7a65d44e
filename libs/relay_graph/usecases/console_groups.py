"""What the console's whole view folds together (pure): each network node's city, the backbone as
`Core`, the catalogue and the places (plans, offers, add-ons, answers, playbooks, countries, regions)
as `Catalogue`. Network nodes carry no city of their own, so it is read from their names and their
edges: a hub is "<city> hub", an exchange "<area> exchange (<city>)" (desk.network.homes names
them), a cabinet hangs off an exchange (PON), a home box off a cabinet (DROP), an area is IN_CITY
a city. Customers, facts, tickets and episodes are never folded."""

from __future__ import annotations

from collections.abc import Iterable

from relay_graph.desk.network.homes import city_of_exchange

CORE = "Core"
CATALOGUE = "Catalogue"
CATALOGUE_KINDS = frozenset({"Plan", "Offer", "AddOn", "Faq", "Playbook", "Country", "Region", "Community"})
HUB_SUFFIX = " hub"


def own_group(kind: str, name: str) -> str | None:
    """The group a node's kind and name alone say, None when its edges must tell."""
    if kind == "Backbone":
        return CORE
    if kind in CATALOGUE_KINDS:
        return CATALOGUE
    if kind == "Pop":
        return name[: -len(HUB_SUFFIX)] if name.endswith(HUB_SUFFIX) else None
    if kind == "Olt":
        return city_of_exchange(name)
    if kind == "City":
        return name or None
    return None


# Edge type -> (the end whose group is known, the end that takes it).
_CARRIED = {"PON": ("target", "source"), "DROP": ("source", "target"), "IN_CITY": ("target", "source")}
_FOLDED_KINDS = frozenset({"Splitter", "Ont", "NetNode", "Area"})


def assign(nodes: Iterable, edges: Iterable) -> None:
    """Sets `group` on every node the whole view may fold (module doc), in place."""
    nodes = list(nodes)
    by_id = {n.id: n for n in nodes}
    for n in nodes:
        if n.band == "network" or n.kind in CATALOGUE_KINDS:
            n.group = own_group(n.kind, n.name)
    carried = [e for e in edges if e.type in _CARRIED]
    # cabinets take their exchange's city, then home boxes their cabinet's: two passes reach both
    for _ in range(2):
        for e in carried:
            known, takes = _CARRIED[e.type]
            src = by_id.get(getattr(e, known))
            dst = by_id.get(getattr(e, takes))
            if src is not None and dst is not None and dst.group is None and src.group is not None \
                    and dst.kind in _FOLDED_KINDS:
                dst.group = src.group
