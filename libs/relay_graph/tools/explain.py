"""How we know a fact: its record and everything around it in the graph, as typed views."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel

from relay_graph.memory.facts import from_ms, record_consulted
from relay_graph.usecases.provenance import fact_provenance
from relay_graph.usecases.context import Call
from relay_graph.tools.envelope import UnknownName, when
from relay_graph.tools.resolve import UnknownNames

FactStateName = Literal["current", "superseded", "retired", "claim"]


class EpisodeRef(BaseModel):
    episode_id: str
    session: str | None = None
    speaker: str | None = None
    kind: str | None = None
    text: str | None = None
    at: datetime | None = None


class FactBrief(BaseModel):
    fact_id: str
    object: str | None
    asserted_by: str | None
    state: FactStateName
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    recorded_at: datetime | None = None
    expired_at: datetime | None = None


class FactRecord(FactBrief):
    subject: str | None
    predicate: str
    corroborations: int = 1
    source: str | None = None


class ConflictView(BaseModel):
    conflict_id: str
    open: bool
    opened_at: datetime | None = None
    settled_by: str | None = None
    settled_at: datetime | None = None
    settled_for: str | None = None
    claims: list[FactBrief]


class Consultation(BaseModel):
    agent: str
    count: int
    last_at: datetime | None = None


class FactExplanation(BaseModel):
    fact: FactRecord
    written_by: list[str]
    derived_from: list[EpisodeRef]
    retired_by: list[EpisodeRef]
    supersedes: list[FactBrief]
    superseded_by: list[FactBrief]
    conflict: ConflictView | None
    consulted_by: list[Consultation]


def _brief(m: dict[str, Any]) -> FactBrief:
    return FactBrief(fact_id=m["fact_id"], object=m.get("object"), asserted_by=m.get("asserted_by"),
                     state=m["state"], valid_from=from_ms(m.get("valid_from_ms")),
                     valid_to=from_ms(m.get("valid_to_ms")), recorded_at=from_ms(m.get("recorded_at_ms")),
                     expired_at=from_ms(m.get("expired_at_ms")))


def _episode(m: dict[str, Any]) -> EpisodeRef:
    return EpisodeRef(episode_id=m["episode_id"], session=m.get("session"), speaker=m.get("speaker"),
                      kind=m.get("kind"), text=m.get("text"), at=from_ms(m.get("at_ms")))


def _present(maps: list[dict[str, Any]] | None, key: str) -> list[dict[str, Any]]:
    """Drop the all-null map an OPTIONAL MATCH that found nothing leaves in a collect()."""
    return sorted((m for m in maps or () if m.get(key) is not None), key=lambda m: str(m.get(key)))


def explanation(row: dict[str, Any]) -> FactExplanation:
    f = row["fact"]
    record = FactRecord(
        fact_id=f["fact_id"], subject=row.get("subject"), predicate=f["predicate"], object=f.get("object_name"),
        asserted_by=f.get("asserted_by"), state=f["state"], valid_from=from_ms(f.get("valid_from_ms")),
        valid_to=from_ms(f.get("valid_to_ms")), recorded_at=from_ms(f.get("recorded_at_ms")),
        expired_at=from_ms(f.get("expired_at_ms")), corroborations=f.get("corroborations") or 1,
        source=f.get("source"))
    conflicts = _present(row.get("conflicts"), "conflict_id")
    conflict = None
    if conflicts:
        c = conflicts[0]
        conflict = ConflictView(
            conflict_id=c["conflict_id"], open=bool(c.get("open")), opened_at=from_ms(c.get("opened_at_ms")),
            settled_by=c.get("settled_by"), settled_at=from_ms(c.get("settled_at_ms")),
            settled_for=c.get("settled_for"), claims=[_brief(m) for m in _present(row.get("between"), "fact_id")])
    return FactExplanation(
        fact=record,
        written_by=sorted(a for a in row.get("writers") or () if a),
        derived_from=sorted((_episode(m) for m in _present(row.get("derived"), "episode_id")),
                            key=lambda e: (e.at is None, e.at, e.episode_id)),
        retired_by=[_episode(m) for m in _present(row.get("retired_by"), "episode_id")],
        supersedes=[_brief(m) for m in _present(row.get("supersedes"), "fact_id")],
        superseded_by=[_brief(m) for m in _present(row.get("superseded_by"), "fact_id")],
        conflict=conflict,
        consulted_by=[Consultation(agent=m["agent"], count=int(m.get("count") or 0), last_at=from_ms(m.get("last_ms")))
                      for m in _present(row.get("consulted"), "agent")],
    )


def _snippet(text: str | None, limit: int = 80) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def how_lines(e: FactExplanation) -> list[str]:
    f = e.fact
    lines = [f"fact {f.fact_id}: {f.subject} {f.predicate} = {f.object} ({f.state}; recorded "
             f"{when(f.recorded_at)} by {', '.join(e.written_by) or f.asserted_by})"]
    lines += [f"episode {ep.episode_id} DERIVED fact {f.fact_id}: \"{_snippet(ep.text)}\" ({ep.speaker}, "
              f"{when(ep.at)})" for ep in e.derived_from]
    lines += [f"episode {ep.episode_id} RETIRED fact {f.fact_id}" for ep in e.retired_by]
    lines += [f"fact {f.fact_id} SUPERSEDES fact {old.fact_id} ({f.predicate} = {old.object}, by {old.asserted_by})"
              for old in e.supersedes]
    lines += [f"fact {new.fact_id} SUPERSEDES fact {f.fact_id} ({f.predicate} = {new.object}, by {new.asserted_by})"
              for new in e.superseded_by]
    if e.conflict is not None:
        c = e.conflict
        state = "open" if c.open else f"settled by {c.settled_by} for fact {c.settled_for}"
        lines.append(f"conflict {c.conflict_id} BETWEEN " + ", ".join(
            f"fact {b.fact_id} ({b.object}, {b.asserted_by})" for b in c.claims) + f": {state}")
    return lines


async def explain_facts(ctx: Call, fact_ids: list[str], *,
                        fact_argument: str | None = None) -> tuple[list[FactExplanation], list[str]]:
    """Each fact's explanation, in the order given. A fact id that is not in this tenant's graph is
    an unknown name (of the argument `fact_argument`). The caller is recorded as having CONSULTED
    the facts it had explained."""
    out: list[FactExplanation] = []
    for fact_id in fact_ids:
        row = await fact_provenance(ctx, fact_id)
        if row is None:
            raise UnknownNames([UnknownName(argument=fact_argument or "fact_id", kind="fact", name=fact_id)])
        out.append(explanation(row))
    await record_consulted(ctx.client, ctx.tenant, ctx.agent, [e.fact.fact_id for e in out])
    return out, [line for e in out for line in how_lines(e)]
