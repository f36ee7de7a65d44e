"""`python -m services.netops`: one replica of netops (consumer group "netops")."""

from __future__ import annotations

import sys

from relay_graph.agents import run_agent

from .bootstrap import bootstrap
from .handlers import HANDLERS
from .settings import SERVICE, NetopsSettings

if __name__ == "__main__":
    sys.exit(run_agent(SERVICE, NetopsSettings(), HANDLERS, bootstrap))
