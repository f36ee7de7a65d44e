"""Composition root of the resolver: Deps with a graph client, Memory, the streams' Redis and
Publisher, and a clock. Tests pass any of them in (see relay_graph.usecases.context.build_deps)."""

from __future__ import annotations

from typing import Any

from relay_graph.usecases.context import Deps, build_deps

from .settings import SERVICE, ResolverSettings


async def bootstrap(settings: ResolverSettings | None = None, **overrides: Any) -> Deps:
    return await build_deps(SERVICE, settings or ResolverSettings(), **overrides)
