"""A LangGraph agent whose long-term memory is Relay: one line (`compile(store=RelayStore(...))`),
and every other agent of the tenant shares what it remembers. A stub stands in for the chat model,
so it runs offline; swap in a real one where `stub_model` is called.

    RELAY_URL=http://127.0.0.1:8000 RELAY_ADMIN_KEY=... python examples/langgraph_agent.py
"""

import uuid
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore

from relay_client import Admin
from relay_client.langgraph import RelayStore

# What a real model would decide: which memory a statement updates (one key per topic, so a new
# home replaces the old one).
TOPICS = {"home": ("live in", "moved to"), "diet": ("allergic", "vegetarian"), "drink": ("tea", "coffee")}


class State(TypedDict):
    user: str
    message: str
    reply: str


def stub_model(question: str, memories: list[str]) -> str:
    return f"From what you told me: {memories[0]}" if memories else "I don't know that yet."


def remember(state: State, *, store: BaseStore) -> dict:
    said = state["message"]
    topic = next((t for t, words in TOPICS.items() if any(w in said.lower() for w in words)), None)
    if not said.endswith("?") and topic:
        store.put(("memories", state["user"]), topic, {"text": said})
        print(f"stored {topic}: {said}")
    return {}


def answer(state: State, *, store: BaseStore) -> dict:
    if not state["message"].endswith("?"):
        return {"reply": "Noted."}
    found = store.search(("memories", state["user"]), query=state["message"], limit=1)
    print(f"recalled for {state['message']!r}: {found[0].key} = {found[0].value['text']!r}" if found else "recalled nothing")
    return {"reply": stub_model(state["message"], [i.value["text"] for i in found])}


graph = StateGraph(State)
graph.add_node("remember", remember)
graph.add_node("answer", answer)
graph.add_edge(START, "remember")
graph.add_edge("remember", "answer")
graph.add_edge("answer", END)

admin = Admin()
tenant = f"langgraph-{uuid.uuid4().hex[:6]}"
relay = admin.tenant(tenant, admin.create_tenant(tenant).api_key)
store = RelayStore(relay)
app = graph.compile(store=store)  # the one line: Relay is the graph's long-term memory

for said in ["I live in Pune, near the river.", "I am allergic to peanuts.", "I drink masala tea every morning.",
             "We moved to Mumbai last month.", "Where do I live now?", "Is there any food I can't eat?"]:
    reply = app.invoke({"user": "asha", "message": said, "reply": ""})["reply"]
    if said.endswith("?"):
        print("agent:", reply)

# An update replaces the value LangGraph sees; the earlier one stays in Relay, with both clocks.
for v in store.history(("memories", "asha"), "home"):
    print(f"home was {v.value['text']!r}, written by {v.agent} at {v.at:%H:%M:%S}")
print("namespaces:", store.list_namespaces())
admin.delete_tenant(tenant)
