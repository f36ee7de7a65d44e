"""Recall on implicit cues: a later remark that depends on an earlier turn without sharing its
words ("How is the new furry family member settling in?" after "We finally adopted a golden
retriever puppy from the shelter last week."). `python -m bench.implicit_cues` (`--quick`: half
the conversations).

Data: bench/data/implicit_cues.json, written by hand for this repository: the pairs (earlier turn,
later remark, and a trap: a turn that shares the remark's surface words and is about something
else) and small-talk distractors. Two sets are built from them with a fixed seed (SEED):

- small talk: two friends (names from bench.conversations), dated sessions a week apart,
  distractors in every session, each pair's earlier turn said by one friend in an early session.
  The pairs of the first half of the conversations are the DEV half; the rest is TEST.
- LoCoMo haystack: the same pairs in real conversations. The earlier turns (and the traps) are put
  into the five LoCoMo conversations of `shared/data/locomo-dev/` (read at run time, never copied:
  bench.locomo), each earlier turn said by one of the conversation's two speakers in one of its
  sessions but the last two. The dev half of the pairs goes into bench.locomo's DEV conversations,
  the test half into its TEST ones. Skipped, and said so, without that data.

The later remark is what recall is asked, after the last session, as an agent would ask it before
answering the remark (it is not written itself: it would be its own best match). Recall's weights
may be chosen on the dev halves only.

Each conversation goes into its own tenant through the library's write path with the turn facts
`POST /episodes` files (`Memory.write_episodes(..., extract=True)`), and into the two standard
retrievers over the same turns: the plain vector store (the same embedder, cosine over each turn's
text) and BM25 (rank_bm25 Okapi, lower-cased word tokens). Printed: hit@1/5/10 (the earlier turn
among the first k) per set, half and system, with the load average. Writes
bench/results/implicit_cues.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from rank_bm25 import BM25Okapi
from rich.console import Console
from rich.table import Table

from relay_graph.memory.facade import Memory
from relay_graph.memory.models import EpisodeInput
from relay_graph.runtime.config import GraphSettings
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embedded import EmbeddedFalkorDB, free_port
from relay_graph.runtime.embeddings import Embedder
from bench.registered import register

from . import locomo
from .conversations import FIRST_NAMES
from .memory_core import finish, say

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "implicit_cues.json"
RESULTS = REPO / "bench" / "results" / "implicit_cues.json"
SEED = 33
CUTS = (1, 5, 10)
K = max(CUTS)
SYSTEMS = ("bm25", "vector", "relay")
SETS = ("small talk", "LoCoMo haystack")
HAYSTACK_INDEX = 100  # the LoCoMo haystack's conversations are numbered from here
_TOKEN = re.compile(r"\w+")
START = datetime(2024, 1, 8, 18, 0, tzinfo=timezone.utc)


@dataclass(frozen=True)
class Turn:
    id: str
    session: str
    speaker: str
    text: str
    at: datetime


@dataclass(frozen=True)
class Cue:
    conversation: int
    q: str
    evidence: str  # the earlier turn's id


@dataclass(frozen=True)
class Conversation:
    index: int
    turns: list[Turn]
    cues: list[Cue]
    half: str = "dev"
    set: str = SETS[0]


def load_data(path: Path = DATA) -> dict[str, Any]:
    return json.loads(path.read_text())


def build(data: dict[str, Any], conversations: int, *, sessions: int = 8, turns_per_session: int = 12,
          seed: int = SEED) -> list[Conversation]:
    """The pairs dealt over `conversations` conversations (seeded), each among distractors."""
    rng = random.Random(seed)
    pairs = list(data["pairs"])
    rng.shuffle(pairs)
    per = max(1, len(pairs) // conversations)
    out = []
    halfway = max(1, conversations // 2)
    for c in range(conversations):
        mine = pairs[c * per:(c + 1) * per]
        a, b = rng.sample(FIRST_NAMES, 2)
        # each earlier turn in one of the first sessions but the last two (the remark comes later)
        placed = {i: rng.randrange(0, max(1, sessions - 2)) for i in range(len(mine))}
        # and a trap (the remark's words, another topic) in any session
        trapped = {i: rng.randrange(0, sessions) for i in range(len(mine))}
        turns: list[Turn] = []
        cues: list[Cue] = []
        for s in range(sessions):
            at = START + timedelta(days=7 * s + c)
            texts = [(rng.choice((a, b)), rng.choice(data["distractors"])) for _ in range(turns_per_session)]
            for i, pair in enumerate(mine):
                if placed[i] == s:
                    texts.insert(rng.randrange(0, len(texts) + 1), (a, pair["earlier"], i))  # type: ignore[arg-type]
                if trapped[i] == s and pair.get("trap"):
                    texts.insert(rng.randrange(0, len(texts) + 1), (rng.choice((a, b)), pair["trap"]))
            for t, item in enumerate(texts):
                tid = f"c{c}/D{s + 1}:{t + 1}"
                turns.append(Turn(tid, f"c{c}/session_{s + 1}", item[0], item[1], at))
                if len(item) == 3:
                    cues.append(Cue(c, mine[item[2]]["later"], tid))
        out.append(Conversation(c, turns, cues, "dev" if c < halfway else "test"))
    return out


def implant(data: dict[str, Any], convs: Sequence[locomo.Conversation], seed: int = SEED) -> list[Conversation]:
    """The pairs put into real conversations (seeded): the dev half of the pairs into bench.locomo's
    DEV conversations, the test half into its TEST ones, dealt in turn; each earlier turn said by one
    of the two speakers in one of the conversation's sessions but the last two, at that session's
    time, and each trap in any session."""
    rng = random.Random(seed)
    pairs = list(data["pairs"])
    rng.shuffle(pairs)
    halfway = len(pairs) // 2
    dealt = {"dev": pairs[:halfway], "test": pairs[halfway:]}
    out = []
    for h in ("dev", "test"):
        mine_convs = [c for c in convs if locomo.half(c.name) == h]
        for j, lc in enumerate(mine_convs):
            index = HAYSTACK_INDEX + len(out)
            sessions: dict[str, list[Turn]] = {}
            for t in lc.turns:
                sessions.setdefault(t.session, []).append(Turn(t.id, t.session, t.speaker, t.text, t.at))
            names = list(sessions)
            cues: list[Cue] = []
            for i, pair in enumerate(dealt[h][j::len(mine_convs)]):
                placed = sessions[names[rng.randrange(0, max(1, len(names) - 2))]]
                at = placed[0].at
                tid = f"{lc.name}/cue{i + 1}"
                placed.insert(rng.randrange(0, len(placed) + 1),
                              Turn(tid, placed[0].session, rng.choice(lc.speakers), pair["earlier"], at))
                cues.append(Cue(index, pair["later"], tid))
                if pair.get("trap"):
                    trapped = sessions[names[rng.randrange(0, len(names))]]
                    trapped.insert(rng.randrange(0, len(trapped) + 1),
                                   Turn(f"{lc.name}/trap{i + 1}", trapped[0].session, rng.choice(lc.speakers),
                                        pair["trap"], trapped[0].at))
            turns = [t for n in names for t in sessions[n]]
            out.append(Conversation(index, turns, cues, h, SETS[1]))
    return out


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


class Baselines:
    """BM25 and the plain vector store over one conversation's turns."""

    def __init__(self, embedder: Embedder, turns: Sequence[Turn]):
        self.embedder = embedder
        self.ids = [t.id for t in turns]
        self.bm25 = BM25Okapi([tokens(t.text) for t in turns])
        m = np.asarray(embedder.embed([t.text for t in turns]), dtype=np.float32)
        self.matrix = m / np.linalg.norm(m, axis=1, keepdims=True)

    async def search(self, q: str, k: int = K) -> dict[str, list[str]]:
        bm = self.bm25.get_scores(tokens(q))
        v = np.asarray((await self.embedder.aembed([q]))[0], dtype=np.float32)
        cos = self.matrix @ (v / np.linalg.norm(v))
        return {"bm25": [self.ids[i] for i in np.argsort(-bm, kind="stable")[:k]],
                "vector": [self.ids[i] for i in np.argsort(-cos, kind="stable")[:k]]}


def tenant_of(c: int) -> str:
    return f"cues-{c}"


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """rows: {evidence, found}; hit@k (the earlier turn among the first k)."""
    return {"n": len(rows)} | {f"@{k}": round(statistics.fmean(r["evidence"] in r["found"][:k] for r in rows), 4)
                               for k in CUTS} if rows else {"n": 0}


async def relay_found(memory: Memory, cue: Cue) -> list[str]:
    return [i.episode_id for i in (await memory.recall(tenant_of(cue.conversation), cue.q, k=K)).items]


async def load_all(memory: Memory, convs: Sequence[Conversation]) -> None:
    await register(memory.client.redis, *[tenant_of(c.index) for c in convs])
    for c in convs:
        items = [EpisodeInput(id=t.id, session=t.session, speaker=t.speaker, text=t.text, at=t.at) for t in c.turns]
        for i in range(0, len(items), 250):  # a write takes at most 500
            await memory.write_episodes(tenant_of(c.index), items[i:i + 250], extract=True)


async def measure(memory: Memory, convs: Sequence[Conversation], embedder: Embedder,
                  relay: Callable[[Memory, Cue], Any] = relay_found) -> dict[str, dict[str, Any]]:
    """hit@k per half and system (of one set)."""
    rows: dict[str, dict[str, list]] = {h: {s: [] for s in SYSTEMS} for h in ("dev", "test")}
    for c in convs:
        base = Baselines(embedder, c.turns)
        h = c.half
        for cue in c.cues:
            other = await base.search(cue.q)
            rows[h]["relay"].append({"evidence": cue.evidence, "found": await relay(memory, cue)})
            for s in ("bm25", "vector"):
                rows[h][s].append({"evidence": cue.evidence, "found": other[s]})
    return {h: {s: score(r) for s, r in by.items()} for h, by in rows.items() if by["relay"]}


def haystack(quick: bool, data_dir: Path | None, console: Console) -> list[Conversation]:
    """The LoCoMo haystack set (one DEV and one TEST conversation when quick); none without the data."""
    names = (locomo.DEV[:1] + locomo.TEST[:1]) if quick else (locomo.DEV + locomo.TEST)
    try:
        folder = locomo.data_dir(data_dir)
    except SystemExit as e:
        say(console, f"{e}: the LoCoMo haystack set is skipped")
        return []
    missing = [n for n in names if not (folder / f"{n}.json").is_file()]
    if missing:
        say(console, f"no LoCoMo conversation {', '.join(missing)} in {folder}: the LoCoMo haystack set is skipped")
        return []
    return implant(load_data(), [locomo.load_conversation(folder / f"{n}.json") for n in names])


async def run(*, conversations: int, out: Path | None, console: Console | None = None,
              model_dir: Path | None = None, quick: bool = False, data_dir: Path | None = None,
              with_haystack: bool = True) -> dict[str, Any]:
    console = console or Console(width=150)
    model_dir = model_dir or Path(os.environ.get("RELAY_MODEL_DIR", REPO / ".relay" / "model"))
    sets = {SETS[0]: build(load_data(), conversations)}
    if with_haystack:
        sets[SETS[1]] = haystack(quick, data_dir, console)
    result: dict[str, Any] = {
        "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), "seed": SEED,
        "sets": {name: {"conversations": len(convs), "turns": sum(len(c.turns) for c in convs),
                        "cues": sum(len(c.cues) for c in convs)} for name, convs in sets.items() if convs},
        "machine": {"cpus": os.cpu_count(), "load_avg_before": [round(x, 2) for x in os.getloadavg()]},
    }
    with tempfile.TemporaryDirectory(prefix="relay-cues-") as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "data", free_port(), log_file=Path(tmp) / "falkordb.log")
        server.start()
        client = GraphClient(GraphSettings(falkordb_host=server.host, falkordb_port=server.port, model_dir=model_dir))
        try:
            embedder = Embedder(model_dir, cache_size=10_000)
            memory = Memory(client, embedder)
            result["accuracy"] = {}
            for name, convs in sets.items():
                if not convs:
                    continue
                info = result["sets"][name]
                say(console, f"{name}: loading {info['turns']} turns in {len(convs)} conversations ...")
                await load_all(memory, convs)
                say(console, f"{name}: asking its {info['cues']} remarks ...")
                result["accuracy"][name] = await measure(memory, convs, embedder)
        finally:
            await client.close()
            server.stop()
    return finish(result, console, table, out)


def table(result: dict[str, Any]) -> Table:
    m = result["machine"]
    t = Table(title=f"Implicit cues: hit@k, % (load average {m['load_avg_before']} -> {m.get('load_avg_after')})")
    t.add_column("set")
    t.add_column("half")
    t.add_column("n", justify="right")
    for s in SYSTEMS:
        for k in CUTS:
            t.add_column(f"{s} @{k}", justify="right")
    for name, halves in result["accuracy"].items():
        for h, by in halves.items():
            t.add_row(f"{name} ({result['sets'][name]['turns']} turns)", h, str(by["relay"]["n"]),
                      *[f"{100 * by[s][f'@{k}']:.1f}" for s in SYSTEMS for k in CUTS])
    return t


def parse(argv: Iterable[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.implicit_cues", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="four small-talk conversations instead of eight; two LoCoMo ones instead of five")
    ap.add_argument("--data", type=Path, default=None, help="the LoCoMo conversations' folder (as bench.locomo)")
    ap.add_argument("--no-haystack", action="store_true", help="the small-talk set only")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"where the JSON goes (default {RESULTS})")
    return ap.parse_args(list(argv) if argv is not None else None)


def main(argv: Iterable[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    return asyncio.run(run(conversations=4 if args.quick else 8, out=args.out, quick=args.quick, data_dir=args.data,
                           with_haystack=not args.no_haystack))


if __name__ == "__main__":
    main()
