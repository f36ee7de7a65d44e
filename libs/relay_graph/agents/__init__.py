"""The runtime the desk agents share (intake, resolver, netops): settings, the Deps handlers work
with, the run loop of a replica (consumer group, heartbeat, graceful stop) and the reply path
(an AgentReply episode in the graph, then ReplyWritten on the stream)."""

from .deps import Clock, Deps, bind, build_deps, utc_clock
from .replies import ReplyDraft, honest_words, publish_reply, reply_episode, store_replies, write_replies, write_reply
from .runner import make_app, run_agent, serve
from .settings import AgentSettings

__all__ = [
    "AgentSettings", "Clock", "Deps", "ReplyDraft", "bind", "build_deps", "honest_words", "make_app", "publish_reply",
    "reply_episode", "store_replies",
    "run_agent", "serve", "utc_clock", "write_replies", "write_reply",
]
