"""`python -m services.resolver`: one replica of the resolver (consumer group "resolver")."""

from __future__ import annotations

import sys

from relay_graph.runtime.agents.runner import run_agent

from .bootstrap import bootstrap
from .handlers import HANDLERS
from .settings import SERVICE, ResolverSettings

if __name__ == "__main__":
    sys.exit(run_agent(SERVICE, ResolverSettings(), HANDLERS, bootstrap))
