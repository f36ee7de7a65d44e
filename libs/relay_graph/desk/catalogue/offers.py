"""What the provider sells: plans, monthly add-ons, one-off services (each with its US base price,
localised by pricing.py), and the router models the desk knows. Seeded into every tenant graph;
replies read them from there, never from here."""

from __future__ import annotations

from dataclasses import dataclass

from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.desk.catalogue.brand import OWN_ROUTER_MAKER, PRODUCT_LINE

MONTH = "month"
ONCE = "once"


@dataclass(frozen=True)
class PlanSpec:
    offer_id: str
    name: str
    down_mbps: int
    up_mbps: int
    base_usd: float
    description: str
    rank: int

    @property
    def uid(self) -> str:
        """The Plan entity's uid: the node an on_plan fact points at."""
        return entity_uid("Plan", name_key(self.name))


@dataclass(frozen=True)
class ExtraSpec:
    """An add-on (billed monthly) or a service (billed once)."""

    offer_id: str
    name: str
    base_usd: float
    period: str
    description: str
    rank: int


@dataclass(frozen=True)
class RouterSpec:
    name: str
    maker: str
    wifi: str
    supplied: bool  # we hand it out (and can manage it remotely)

    @property
    def uid(self) -> str:
        return entity_uid("Router", name_key(self.name))


PLANS: tuple[PlanSpec, ...] = (
    PlanSpec("fiber-100", f"{PRODUCT_LINE} 100", 100, 50, 25.0,
             "Browsing, HD streaming and video calls for one or two people.", 1),
    PlanSpec("fiber-300", f"{PRODUCT_LINE} 300", 300, 150, 40.0,
             "A busy household: 4K streaming, gaming and working from home at once.", 2),
    PlanSpec("fiber-1000", f"{PRODUCT_LINE} 1000", 1000, 500, 65.0,
             "Gigabit for big homes, creators and large uploads.", 3),
)

ADDONS: tuple[ExtraSpec, ...] = (
    ExtraSpec("static-ip", "Static IP", 5.0, MONTH, "A fixed public IPv4 address for cameras, servers and VPNs.", 1),
    ExtraSpec("mesh-wifi", "Mesh Wi-Fi", 8.0, MONTH, "Two extra mesh points for Wi-Fi in every room.", 2),
    ExtraSpec("tv-bundle", "TV Bundle", 12.0, MONTH, "Live TV channels and catch-up on the TV box and the app.", 3),
    ExtraSpec("home-phone", "Home Phone", 6.0, MONTH, "A landline number over fibre, with local calls included.", 4),
    ExtraSpec("priority-support", "Priority Support", 4.0, MONTH,
              "Calls answered first and technician visits within a day.", 5),
)

SERVICES: tuple[ExtraSpec, ...] = (
    ExtraSpec("installation", "Standard installation", 40.0, ONCE,
              "A technician brings fibre into the home and sets up the router.", 1),
    ExtraSpec("technician-visit", "Technician visit", 30.0, ONCE,
              "A technician visit for a fault on the customer's side of the box.", 2),
    ExtraSpec("router-replacement", "Router replacement", 45.0, ONCE,
              "A new router, delivered and set up, outside the warranty.", 3),
    ExtraSpec("relocation", "Moving home", 35.0, ONCE, "Moving the line to a new address we serve.", 4),
)

ROUTERS: tuple[RouterSpec, ...] = (
    RouterSpec(f"{OWN_ROUTER_MAKER} Hub 6", OWN_ROUTER_MAKER, "Wi-Fi 6", True),
    RouterSpec(f"{OWN_ROUTER_MAKER} Hub 7", OWN_ROUTER_MAKER, "Wi-Fi 7", True),
    RouterSpec("Nokia G-140W-F", "Nokia", "Wi-Fi 5", True),
    RouterSpec("Huawei HG8245H", "Huawei", "Wi-Fi 4", True),
    RouterSpec("ZTE F670L", "ZTE", "Wi-Fi 5", True),
    RouterSpec("TP-Link Archer C6", "TP-Link", "Wi-Fi 5", False),
    RouterSpec("TP-Link Archer AX55", "TP-Link", "Wi-Fi 6", False),
    RouterSpec("FRITZ!Box 7590", "AVM", "Wi-Fi 5", False),
    RouterSpec("Netgear Nighthawk RAX50", "Netgear", "Wi-Fi 6", False),
    RouterSpec("ASUS RT-AX58U", "ASUS", "Wi-Fi 6", False),
    RouterSpec("Google Nest Wifi", "Google", "Wi-Fi 5", False),
    RouterSpec("eero 6", "eero", "Wi-Fi 6", False),
)

__all__ = ["ADDONS", "ExtraSpec", "MONTH", "ONCE", "PLANS", "PlanSpec", "ROUTERS", "RouterSpec", "SERVICES"]
