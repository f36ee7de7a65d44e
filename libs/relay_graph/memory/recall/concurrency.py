"""The few asyncio helpers recall's round trips are written with."""

from __future__ import annotations

import asyncio
from typing import Any


def task(aw) -> asyncio.Task:
    return asyncio.ensure_future(aw)


async def gather_all(*aws) -> list[Any]:
    """asyncio.gather that cancels the rest when one fails."""
    tasks = [task(a) for a in aws]
    try:
        return await asyncio.gather(*tasks)
    except BaseException:
        for t in tasks:
            t.cancel()
        raise


async def empty() -> list:
    return []


async def nothing() -> Any:
    return None
