"""The engine's tests write the support desk's facts (a customer's city, plan, router): the engine
registers no vocabulary of its own, so they use the desk's, registered by importing it
(test_own_vocabulary.py writes one of its own, in a process without the desk)."""

import relay_graph.desk.vocabulary  # noqa: F401
