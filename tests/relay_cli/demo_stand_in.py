"""A stand-in for services.simulator.demo: records how the hook called it."""

CALLS: list[tuple[str, str]] = []


async def run(base_url: str, admin_key: str) -> None:
    CALLS.append((base_url, admin_key))
