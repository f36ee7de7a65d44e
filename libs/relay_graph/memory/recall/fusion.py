"""Weighted reciprocal-rank fusion of the signals' ranked episodes, and the path that says how each
answered episode was found.

score = sum over the signals that found an item of WEIGHTS[signal] / (RRF_K + its rank there); an
item counts once per signal, at its best rank. An item found several ways outranks one found once
at a similar rank, and no signal's raw scale (distances, hop counts, TF-IDF) has to be calibrated
against another's. Ties go to the nearer in meaning. The fusion runs in the client, on the
signals' ranked ids and distances (ranking a few hundred hits in Cypher collected and copied their
nested lists clause after clause, which cost more than the signals' own reads).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from relay_graph.memory.entities import name_key
from relay_graph.memory.recall import tuning

VIA = {"mentions": "entity <-MENTIONS- episode", "session": "entity -HAS_SESSION-> session <-IN- episode",
       "spoke": "speaker <-SPOKEN_BY- episode", "named": "speaker <-NAMES- episode"}

# (episode id, distance to the question, path steps, found through a named entity or speaker)
Ranked = list[tuple[str, float, list[Any], bool]]


@dataclass
class Candidate:
    id: str
    d: float
    hops: list[Any] = field(default_factory=list)
    ranks: list[tuple[str, int]] = field(default_factory=list)  # (signal, rank there)
    via_entity: bool = False
    weights: Mapping[str, float] | None = None  # None: tuning.WEIGHTS
    below: "Candidate | None" = None  # a turn that joined beside this one ranks no higher than its full score
    factor: float = 1.0  # what its own score is worth (tuning.ASKS_ONLY); a turn beside it is capped at its full score
    answer: "Candidate | None" = None  # a turn that only asks ranks no lower than right after its answer

    @property
    def fused(self) -> float:
        score = self._capped(self.factor)
        if self.answer is not None:
            score = max(score, self.answer._capped(self.answer.factor) * (1.0 - 1e-9))
        return score

    def _capped(self, factor: float) -> float:
        # a plain loop: a recall scores a few hundred candidates several times (fusion.order)
        w = tuning.WEIGHTS if self.weights is None else self.weights
        k = tuning.RRF_K
        own = 0.0
        for s, r in self.ranks:
            own += w[s] / (k + r)
        own *= factor
        return own if self.below is None else min(own, self.below._capped(1.0))


def add(cands: dict[str, Candidate], signal: str, ranked: Ranked,
        weights: Mapping[str, float] | None = None) -> None:
    """A signal's ranked episodes into the candidates (a turn beside two hits counts once, at its
    best); a new candidate is scored with `weights` (None: tuning.WEIGHTS)."""
    rank = 0
    for eid, d, hops, via_entity in ranked:
        c = cands.get(eid)
        if c is None:
            c = cands[eid] = Candidate(eid, float(d), weights=weights)
        elif _found_by(c, signal):
            continue
        rank += 1
        d = float(d)
        if d < c.d:
            c.d = d
        hit(c, signal, rank, hops, via_entity)


def _found_by(c: Candidate, signal: str) -> bool:
    for s, _ in c.ranks:
        if s == signal:
            return True
    return False


def hit(c: Candidate, signal: str, rank: int, hops: list[Any], via_entity: bool) -> None:
    """A signal found the candidate at this rank: its score counts, and the path says how it was
    found (a path through a named entity or speaker first)."""
    c.ranks.append((signal, rank))
    if via_entity and not c.via_entity:
        c.hops = hops + c.hops
        c.via_entity = True
    elif not c.hops:
        c.hops = list(hops)


def order(c: Candidate) -> tuple[float, float, str]:
    return (-c.fused, c.d, c.id)


def sim(d: float) -> str:
    return f"{1.0 - float(d):.2f}"


def another_voice(top: list[Candidate], by_id: dict[str, dict[str, Any]], keys: list[str]) -> bool:
    """Whether the question names one speaker but what is nearest to it in meaning was said by
    someone else, by more than VOICE_MARGIN of similarity, and none of their own turns is within
    VOICE_CEILING of it: "What did Caroline realise after her charity race?" when the race was
    Melanie's. The speaker's own turns are still found (and returned); the graph does not connect
    the question to what that speaker said."""
    if len(keys) != 1 or not top:
        return False
    named = [1.0 - c.d for c in top if name_key(by_id[c.id]["speaker"] or "") == keys[0]]
    other = [1.0 - c.d for c in top if name_key(by_id[c.id]["speaker"] or "") != keys[0]]
    best = max(named, default=0.0)
    return bool(other) and max(other) - best > tuning.VOICE_MARGIN and best < tuning.VOICE_CEILING


# ------------------------------------------------------------------ paths


@dataclass(frozen=True)
class Hops:
    """A signal's hops of one candidate, as read; written out as path steps when it is answered."""

    path: Callable[[Any], list[str]]  # the hops -> the path's steps
    hops: Any

    def steps(self) -> list[str]:
        return self.path(self.hops)


def written_out(hops: list[Any]) -> list[str]:
    return [step for hop in hops for step in (hop.steps() if isinstance(hop, Hops) else [hop])]


def entity_path(hops: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    vias: dict[str, set[str]] = {}
    for h in hops:
        vias.setdefault(h["uid"], set()).add(h["via"])
    out: list[str] = []
    for uid in sorted(vias):  # a customer's own turns also MENTION them: say "session" once
        out += [f"q -> entity '{names[uid]}'", VIA["session" if "session" in vias[uid] else "mentions"]]
    return out


def joined_path(hops: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    out: list[str] = []
    for h in sorted(hops, key=lambda h: (h["uid"], h["via"])):
        out += [f"q -> entity '{names[h['uid']]}'", f"entity <-ABOUT- fact -ABOUT-> entity '{h['via']}'",
                VIA["mentions"]]
    return out


def community_path(hops: list[dict[str, Any]], names: dict[str, str]) -> list[str]:
    out: list[str] = []
    for h in sorted(hops, key=lambda h: (h["uid"], h["via"] or "")):
        out += [f"q -> entity '{names[h['uid']]}'",
                f"entity -IN_COMMUNITY-> community <-IN_COMMUNITY- entity '{h['via']}'", VIA["mentions"]]
    return out


def speaker_path(hops: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for h in sorted(hops, key=lambda h: (h["name"], h["via"])):
        out += [f"q -> speaker '{h['name']}'", VIA[h["via"]]]
    return out
