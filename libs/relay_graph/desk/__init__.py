"""The support desk's domain, built on the memory engine: tickets and their work state, the access network and its
algorithms, the catalogue (plans, prices, places, FAQs, playbooks), the conversation, the
extraction of facts from chat, reply wording (templates, or Groq via `llm`) and its checks.

May use: `relay_graph.memory`, `relay_graph.runtime`. Its Cypher is in `desk.queries`."""

# Importing the desk registers its vocabulary with the engine's registry and declares its indexes
# (desk.queries), once, in whichever process first imports any of it.
from relay_graph.desk import queries, vocabulary  # noqa: E402,F401
