"""Who the resolver sends out. The catalogue's troubleshooting playbooks
(relay_graph.desk.catalogue.playbooks) are the desk's written guide, for people and for intake's tips;
the resolver no longer walks them as steps of its own: every step it takes is an action of the fault
lab's equipment chosen from what it measured (diagnosing.py), and procedures it learns are those
actions (tickets.record_fix)."""

from __future__ import annotations

# Who goes out, picked per ticket so that a redelivery books the same person.
TECHNICIANS: tuple[str, ...] = ("Ravi Kumar", "Meera Iyer", "Sam Okafor", "Lena Fischer")
