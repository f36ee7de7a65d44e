"""The runtime the desk agents share (intake, resolver, netops): settings, the Deps handlers work
with, the run loop of a replica (consumer group, heartbeat, graceful stop) and the reply path
(an AgentReply episode in the graph, then ReplyWritten on the stream) and the announcement path
(`announce`: through the outbox, so what a handler wrote is always announced)."""

from .deps import Clock, Deps, announce, bind, build_deps, fact_changes, utc_clock
from .replies import ReplyDraft, honest_words, publish_reply, reply_episode, store_replies, write_replies, write_reply
from .runner import make_app, run_agent, serve
from .settings import AgentSettings

__all__ = [
    "AgentSettings", "Clock", "Deps", "ReplyDraft", "announce", "bind", "fact_changes", "build_deps", "honest_words", "make_app", "publish_reply",
    "reply_episode", "store_replies",
    "run_agent", "serve", "utc_clock", "write_replies", "write_reply",
]
