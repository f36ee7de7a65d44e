"""`python -m services.intake`: one replica of the intake agent (consumer group "intake")."""

from __future__ import annotations

import sys

from relay_graph.runtime.agents.runner import run_agent

from .bootstrap import bootstrap
from .handlers import HANDLERS
from .settings import SERVICE, IntakeSettings

if __name__ == "__main__":
    sys.exit(run_agent(SERVICE, IntakeSettings(), HANDLERS, bootstrap))
