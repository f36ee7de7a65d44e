"""The simulated customers' world: who they can be, where they live, what they pay for and which
router sits in their hall. Plain constants, chosen so that every value is one the desk's rules
extractor reads back exactly (tests/services/simulator/test_phrasings.py proves it for each one).

The simulator keeps its own small world on purpose: it is a client of Relay, so it knows what a
customer would know (their city, their plan's name, the model on the router's sticker), never what
the desk's catalogue or graph holds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Region:
    name: str
    cities: tuple[str, ...]
    first_names: tuple[str, ...]
    last_names: tuple[str, ...]
    phone_formats: tuple[str, ...]  # "#" is a digit drawn from the seed


REGIONS: tuple[Region, ...] = (
    Region(
        "india",
        ("Pune", "Mumbai", "Bengaluru", "Hyderabad", "Chennai", "Kolkata", "Ahmedabad", "Jaipur", "Lucknow",
         "Indore", "Nagpur", "Kochi"),
        ("Asha", "Ravi", "Priya", "Arjun", "Meena", "Kiran", "Sunita", "Vikram", "Anjali", "Rohan", "Divya",
         "Sanjay", "Neha", "Karthik", "Pooja", "Imran", "Lakshmi", "Farhan", "Kavya", "Nikhil"),
        ("Verma", "Nair", "Iyer", "Sharma", "Reddy", "Patel", "Menon", "Rao", "Gupta", "Joshi", "Khan",
         "Pillai", "Bose", "Kulkarni", "Desai", "Mehta", "Chopra", "Banerjee", "Naidu", "Saxena"),
        ("+91 98### #####", "98### #####", "+91 9#########", "+91 70### #####"),
    ),
    Region(
        "europe",
        ("London", "Manchester", "Bristol", "Leeds", "Dublin", "Paris", "Lyon", "Berlin", "Munich", "Madrid",
         "Lisbon", "Amsterdam"),
        ("Emma", "Liam", "Sophie", "Lucas", "Clara", "Jonas", "Marta", "Tomas", "Elena", "Oliver", "Greta",
         "Hugo", "Ines", "Felix", "Nora", "Pablo", "Ana", "Matteo", "Lena", "Samuel"),
        ("Fischer", "Moreau", "Walsh", "Jansen", "Costa", "Schmidt", "Dubois", "Murphy", "Garcia", "Novak",
         "Berger", "Lambert", "Silva", "Keller", "Byrne", "Romero", "Weber", "Laurent", "Doyle", "Hansen"),
        ("+44 7700 ######", "07700 ######", "+353 87 ### ####", "+49 151 ########"),
    ),
)

# Plan names as the provider sells them (customers say them the way they are on the bill).
PLANS: tuple[str, ...] = ("Fiber 100", "Fiber 300", "Fiber 1000")

# Router models as printed on the sticker underneath.
ROUTERS: tuple[str, ...] = (
    "TP-Link Archer C6",
    "TP-Link Archer AX55",
    "Netgear Nighthawk RAX50",
    "Mercusys MR70X",
    "ZTE F670L",
    "Tenda AC10",
    "D-Link DIR-842",
    "Linksys EA7500",
)

# Where a customer's connection can fail ("node": the kind of network node it sits on, as the API
# spells it). A fault on a node the network holds is injected for real (services/simulator/faults.py);
# one in the home is on no network node and lives only in what the customer says.
FAULT_KINDS: dict[str, dict] = {
    # kind: the symptom the customer reports (an IssueKind value), where in the network it is
    "fibre_cut": {"symptom": "no_signal_light", "node": "Ont"},
    "box_dead": {"symptom": "no_connection", "node": "Ont"},
    "cabinet_down": {"symptom": "no_connection", "node": "Splitter"},
    "exchange_down": {"symptom": "no_connection", "node": "Olt"},
    "congestion": {"symptom": "slow_speed", "node": None},
    "wifi_interference": {"symptom": "wifi_drops", "node": None},
    "router_hang": {"symptom": "router_frozen", "node": None},
    "flaky_line": {"symptom": "intermittent", "node": None},
}
