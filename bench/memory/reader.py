"""One reader for both systems: the question and its dated lines in, an answer (or a refusal) out.

The deterministic reader (no LLM key) knows only what a question's words say (the kind of value
asked for, the moment, an issue, an agent) and the shared vocabulary (bench.memory.vocab). It never
sees gold and has no rule for one system that the other does not get:

1. lines dated after the moment asked about are set aside;
2. the rest are read newest first;
3. a single value: the newest line that names the thing asked about and a value of the asked kind
   gives it (the value named last in the line: "moved from Pune to Mumbai" -> Mumbai);
4. a set (claims, devices, problems): everything the lines name (claims: one per agent named);
5. which outage (two hops): the outage named in the city the lines say the customer lives in,
   else the newest outage named, else "none";
6. nothing found: refuse (None).

With GROQ_API_KEY set, `LlmReader` asks one model with one prompt for both systems instead; its
free-text answer is mapped onto the same vocabulary."""

from __future__ import annotations

import os
from datetime import datetime
from . import vocab as v
from .contexts import Line, newest_first
from .questions import NONE, REFUSE, Question

Answer = str | list[str] | None  # None: refused

_VALUES = {"city": v.CITIES, "plan": v.PLAN_NAMES, "router": v.ROUTER_NAMES}
_CUES = {"city": v.PREDICATE_CUES["lives_in"], "plan": v.PREDICATE_CUES["on_plan"],
         "router": v.PREDICATE_CUES["has_router"] + ("replaced",)}


def _at(value: str) -> datetime:
    return datetime.fromisoformat(value)


def visible(lines: list[Line], as_of: str | None) -> list[Line]:
    if as_of is None:
        return newest_first(lines)
    limit = _at(as_of)
    return newest_first([ln for ln in lines if ln[0] is None or _at(ln[0]) <= limit])


def _last_named(text: str, values: tuple[str, ...]) -> str | None:
    found = v.mentions(text, values)
    return found[-1][1] if found else None


def _as(q: Question, kind: str) -> Question:
    """The same question asking for another kind of value (a hop on the way)."""
    return Question(id=q.id, type=q.type, text=q.text, customer=q.customer, answer_kind=kind, gold="",
                    issue=q.issue, agent=q.agent)


def read(q: Question, lines: list[Line], as_of: str | None = None) -> Answer:
    kind = q.answer_kind
    lines = visible(lines, as_of)
    texts = [t for _, t in lines]
    if kind in _VALUES:
        for t in texts:
            low = t.lower()
            if any(c in low for c in _CUES[kind]):
                value = _last_named(t, _VALUES[kind])
                if value:
                    return value
        return None
    if kind == "router_claims":
        by_agent: dict[str, str] = {}
        for t in texts:
            agents = [a for a in v.AGENTS if a in t]
            value = _last_named(t, v.ROUTER_NAMES)
            if agents and value and agents[0] not in by_agent:
                by_agent[agents[0]] = value
        return sorted(set(by_agent.values())) or None
    if kind == "outage_city":
        # two hops: where the customer lives, then an outage there; else the newest outage named
        home = read(_as(q, "city"), lines)
        named = [c for t in texts if any(w in t.lower() for w in v.OUTAGE_WORDS)
                 for c in [_last_named(t, v.CITIES)] if c]
        if home in named:
            return home
        return named[0] if named else NONE
    if kind == "devices":
        return sorted({d for t in texts for _, d in v.mentions(t, v.DEVICES)}) or None
    if kind == "issues":
        return sorted({i for t in texts for i in v.issues_in(t)}) or None
    if kind == "fix":
        for t in texts:
            low = t.lower()
            if q.issue in v.issues_in(t) and not any(n in low for n in v.NEGATIONS):
                fix = _last_named(t, v.ALL_FIXES)
                if fix:
                    return fix
        return None
    if kind == "phone":
        for t in texts:
            if q.agent and q.agent in t:
                found = v.PHONE_RX.findall(t)
                if found:
                    return found[-1].strip()
        return None
    if kind == "email":
        for t in texts:
            found = v.EMAIL_RX.findall(t)
            if found:
                return found[-1]
        return None
    raise ValueError(f"unknown answer kind {kind!r}")


# ---------------------------------------------------------------- scoring one answer


def _norm(value: str, kind: str) -> str:
    return v.digits(value) if kind == "phone" else " ".join(value.lower().split())


def correct(q: Question, answer: Answer) -> bool:
    if q.gold == REFUSE:
        return answer is None
    if answer is None:
        return False
    if isinstance(q.gold, list):
        return isinstance(answer, list) and sorted(_norm(a, q.answer_kind) for a in answer) == sorted(
            _norm(g, q.answer_kind) for g in q.gold)
    return isinstance(answer, str) and _norm(answer, q.answer_kind) == _norm(q.gold, q.answer_kind)


def named_values(kind: str, texts: list[str]) -> set[str]:
    """Every value of the kind a question asks for that the texts name (as the reader sees them)."""
    joined = texts
    if kind in ("city", "outage_city"):
        return {x for t in joined for _, x in v.mentions(t, v.CITIES)}
    if kind == "plan":
        return {x for t in joined for _, x in v.mentions(t, v.PLAN_NAMES)}
    if kind in ("router", "router_claims"):
        return {x for t in joined for _, x in v.mentions(t, v.ROUTER_NAMES)}
    if kind == "devices":
        return {x for t in joined for _, x in v.mentions(t, v.DEVICES)}
    if kind == "issues":
        return {x for t in joined for x in v.issues_in(t)}
    if kind == "fix":
        return {x for t in joined for _, x in v.mentions(t, v.ALL_FIXES)}
    if kind == "phone":
        return {v.digits(x) for t in joined for x in v.PHONE_RX.findall(t)}
    if kind == "email":
        return {x.lower() for t in joined for x in v.EMAIL_RX.findall(t)}
    raise ValueError(f"unknown answer kind {kind!r}")


def gold_in_context(q: Question, lines: list[Line]) -> bool:
    """Every gold value is named somewhere in the context (any date; an outage's city only in a line
    about an outage). For a question that must be refused: the context names no value of the kind
    asked. For "no outage": no outage is named."""
    texts = [t for _, t in lines]
    if q.gold == REFUSE:
        return not named_values(q.answer_kind, texts)
    if q.gold == NONE:
        return not any(w in t.lower() for t in texts for w in v.OUTAGE_WORDS)
    if q.answer_kind == "outage_city":  # the fact is the outage there, not the city's name alone
        texts = [t for t in texts if any(w in t.lower() for w in v.OUTAGE_WORDS)]
    golds = q.gold if isinstance(q.gold, list) else [q.gold]
    named = {x.lower() for x in named_values(q.answer_kind, texts)}
    want = {v.digits(g) if q.answer_kind == "phone" else g.lower() for g in golds}
    return want <= named


# ---------------------------------------------------------------- with a model


PROMPT = ("You answer questions about a telecom provider's customers using ONLY the context lines given. "
          "Each line starts with its date. If a moment is given, ignore lines dated after it. Prefer the newest "
          "line. If the context does not answer the question, reply exactly: I don't know. Reply with the "
          "answer only; for a list, separate the items with commas; if asked about an outage and there is none, "
          "reply: none.")


def llm_messages(q: Question, question_text: str, lines: list[Line], as_of: str | None) -> list[dict[str, str]]:
    body = "\n".join(f"[{d or 'undated'}] {t}" for d, t in newest_first(lines)) or "(no context)"
    moment = f"\nThe moment asked about: {as_of}" if as_of else ""
    return [{"role": "system", "content": PROMPT},
            {"role": "user", "content": f"Context:\n{body}\n\nQuestion: {question_text}{moment}"}]


def parse_llm(q: Question, text: str) -> Answer:
    """A model's words mapped onto the vocabulary of the kind asked for (the same mapping for both)."""
    low = text.strip().lower()
    if "i don't know" in low or "i do not know" in low:
        return None
    fake = _as(q, q.answer_kind)
    kind = q.answer_kind
    if kind in _VALUES:
        return _last_named(text, _VALUES[kind])
    if kind == "router_claims":
        return sorted({x for _, x in v.mentions(text, v.ROUTER_NAMES)}) or None
    if kind == "outage_city":
        return _last_named(text, v.CITIES) or NONE
    if kind == "fix":
        return _last_named(text, v.ALL_FIXES)
    if kind == "phone":
        found = v.PHONE_RX.findall(text)
        return found[-1] if found else None
    return read(fake, [(None, text)])


class LlmReader:
    """The same model and prompt for both systems (only with GROQ_API_KEY)."""

    def __init__(self) -> None:
        from relay_graph.desk.llm.client import GroqChat
        from relay_graph.desk.llm.settings import DEFAULT_WRITE_MODELS, LLMSettings

        keys = [k for k in os.environ.get("GROQ_API_KEY", "").split(",") if k.strip()]
        settings = LLMSettings(api_keys=tuple(keys))
        self.model = DEFAULT_WRITE_MODELS[0]
        self.chat = GroqChat.from_settings(settings, [self.model])

    async def read(self, q: Question, question_text: str, lines: list[Line], as_of: str | None) -> Answer:
        text: str = await self.chat.complete(llm_messages(q, question_text, lines, as_of), lambda s: s,
                                             max_completion_tokens=200)
        return parse_llm(q, text)

    async def aclose(self) -> None:
        await self.chat.aclose()
