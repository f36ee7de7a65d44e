"""The agents' process plumbing (intake, resolver, netops): their settings and the run loop of a
replica (consumer group, heartbeat, outbox relay, graceful stop). What a handler works with is the
use cases' context (`relay_graph.usecases.context.Deps`); the reply path is `usecases.replies`."""

from relay_graph.runtime.agents.runner import bind, make_app, run_agent, serve
from relay_graph.runtime.agents.settings import AgentSettings

__all__ = ["AgentSettings", "bind", "make_app", "run_agent", "serve"]
