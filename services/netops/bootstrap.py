"""Composition root of netops: Deps with a graph client, Memory, the streams' Redis and Publisher,
and a clock. Tests pass any of them in (see relay_graph.usecases.context.build_deps)."""

from __future__ import annotations

from typing import Any

from relay_graph.usecases.context import Deps, build_deps

from .settings import SERVICE, NetopsSettings


async def bootstrap(settings: NetopsSettings | None = None, **overrides: Any) -> Deps:
    return await build_deps(SERVICE, settings or NetopsSettings(), **overrides)
