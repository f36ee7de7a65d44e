"""Judge mode's story, set up as one write (routers/judge.py): a new customer (no name yet: she says
it in her first message), the region's world seeded with her home connected in the story's city,
so the fault the story is about can be planted on her line before she says a word. Nothing is
announced for the customer or the world (a new network has no outage and no ticket yet); the
fault is the lab's (usecases/faults.inject_fault owes its network changes)."""

from __future__ import annotations

from relay_graph.usecases import customers, world
from relay_graph.usecases.context import Call


async def story_customer(call: Call, region: str, home: str) -> str:
    """The story's customer's id, her home connected at `home` in `region`'s seeded world."""
    customer = await customers.create_customer(call)
    await world.seed_world(call, region, customers=[(customer, home)])
    return customer
