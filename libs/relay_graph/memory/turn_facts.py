"""Facts a conversation turn states about its speaker, read by rules (no model, no network): what
`POST /episodes` files beside the turns it writes, so that entities and the joins through them
have something to stand on in any multi-session conversation, not only the desk's.

Each rule reads a first-person statement and names its speaker as the subject (a `Person` entity
with the speaker's name, so a question that names the speaker anchors on it):

- has_pet:   "my dog Biscuit", "our cat, Oliver", "a puppy named Luna"         -> Pet
- knows:     "my sister Anna", "my friend Jon", "my husband, Mark"              -> Person
- visited:   "I went to Paris", "we travelled to Sweden", "our trip to Hawaii"   -> Place
- comes_from: "I'm from Sweden", "I grew up in Ohio"                            -> Place
- mentioned: a quoted title, "I loved "Becoming Nicole""                         -> Work

An object is a capitalised name (one to three words; a quoted title up to eight), never the
speaker, a pronoun, a weekday or a month: lower-case words after "my dog" are no name ("my dog
loves walks"), and a rule that guesses stays silent. Each fact is dated: `valid_from` is the start
of the time the turn says ("Last Saturday I adopted a puppy named Luna" said on Monday 8 May 2023:
6 May), else the turn's own time; its source is the turn (DERIVED). `extract` is pure logic;
`file_facts` writes what it finds for a batch of turns just written (`Memory.write_episodes(...,
extract=True)`, which `POST /episodes` calls):

- the facts go through the ordinary fact write (`facts.write_facts_each`: bitemporal, by the
  writing agent, labelled `turn-rules`), each with its claim's vector; a fact the write refuses
  is left out and the turns stay written (a rule's slip must not lose what was said);
- the source turn MENTIONS its facts' subject and object, and so does every turn of the batch
  that names one of them (those were written before the entity existed); later turns are linked
  by the episode write itself (an n-gram equal to a known name);
- a turn that already DERIVED a rule fact is not read again: a replayed batch files nothing twice.

Desk turns (those with a `customer`) are left to the desk's own extractors.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from relay_graph.memory import fact_embeddings, facts
from relay_graph.memory.entities import entity_uid, name_key
from relay_graph.memory.episodes import word_ngrams
from relay_graph.memory.models import EpisodeInput, FactInput, FactWriteResult
from relay_graph.memory.queries import episodes as q
from relay_graph.memory.registry import clean_text
from relay_graph.runtime.db import GraphClient
from relay_graph.runtime.embeddings import Embedder

from relay_graph.memory.time_expressions import DAY_SLACK, MONTHS, WEEKDAYS
from relay_graph.memory.time_expressions import windows as time_windows

SUBJECT_TYPE = "Person"
LABEL = "turn-rules"  # the facts' sub-label under the writing agent
DEFAULT_AGENT = "episodes"  # when a turn names no agent (library callers)
MAX_FACTS = 8  # per turn: a long monologue lists places and people, a rule's slip stays bounded

_NAME = r"(?P<name>[A-Z][\w'’-]*(?:\s+(?:of\s+|the\s+|de\s+)?[A-Z][\w'’-]*){0,2})"
_PETS = (r"dog|doggo|puppy|pup|cat|kitty|kitten|bird|parrot|hamster|rabbit|bunny|turtle|tortoise|"
         r"horse|pony|snake|lizard|goldfish|fish|guinea\s+pig")
_KIN = (r"sister|brother|sis|bro|mom|mum|mother|dad|father|husband|wife|son|daughter|friend|bestie|"
        r"partner|boyfriend|girlfriend|fianc[eé]e?|cousin|aunt|auntie|uncle|grandma|grandmother|"
        r"grandpa|grandfather|niece|nephew|boss|colleague|coworker|co-worker|mentor|neighbou?r|"
        r"roommate|teammate|buddy|pal|kid|child|baby|stepson|stepdaughter|sibling")
_ADJ = r"(?:(?:new|little|sweet|old|older|younger|big|best|oldest|youngest|eldest|lovely|dear|"\
       r"furry|adorable|baby|two|three)\s+)*"
_CALLED = r"(?:\s*,\s*|\s+)(?:(?:who(?:'s| is)\s+)?(?:named|called)\s+)?"

RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("has_pet", "Pet", re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+{_ADJ}(?:{_PETS})s?{_CALLED}{_NAME}")),
    ("has_pet", "Pet", re.compile(rf"\b(?:a|an|the)\s+{_ADJ}(?:{_PETS})\s+(?:named|called)\s+{_NAME}")),
    ("knows", "Person", re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+{_ADJ}(?:{_KIN})s?{_CALLED}{_NAME}")),
    ("visited", "Place", re.compile(
        r"\b(?:I|[Ww]e)(?:'ve| have| had|'d)?\s+(?:just\s+|recently\s+|finally\s+|also\s+|once\s+)?"
        r"(?:went|been|gone|traveled|travelled|flew|drove|moved|headed|got\s+back|came\s+back|returned)"
        rf"\s+(?:back\s+)?(?:to|from|in)\s+(?:the\s+)?{_NAME}")),
    ("visited", "Place", re.compile(rf"\b(?:I|[Ww]e)\s+(?:just\s+|recently\s+|finally\s+)?visited\s+(?:the\s+)?{_NAME}")),
    ("visited", "Place", re.compile(rf"\b(?:[Mm]y|[Oo]ur)\s+(?:\w+\s+)?(?:trip|vacation|holiday|visit)\s+to\s+(?:the\s+)?{_NAME}")),
    ("comes_from", "Place", re.compile(
        rf"\b(?:I'm|I am|I’m|I was born|I grew up)\s+(?:originally\s+)?(?:from|in)\s+(?:the\s+)?{_NAME}")),
    ("mentioned", "Work", re.compile(r"[\"“](?P<name>[A-Z][^\"”\n]{1,80}?)[\"”]")),
    ("does", "Activity", re.compile(
        r"\b(?:I|[Ww]e)(?:'ve|'m|'d| have| had| am| are| were| was)?\s+(?:just\s+|recently\s+|finally\s+|really\s+|"
        r"also\s+|always\s+|been\s+|still\s+|even\s+|started\s+|begun\s+|gone\s+)*"
        r"(?:love|loved|enjoy|enjoyed|started|start|took\s+up|take\s+up|tried|began|go|went|do|did|got\s+into|"
        r"signed\s+up\s+for|joined|practi[cs]e|picked\s+up|doing|going|taking|took)\s+(?:to\s+)?"
        r"(?:a\s+|an\s+|the\s+|some\s+|my\s+|our\s+|this\s+|that\s+)?"
        r"(?P<name>(?:[a-z]+\s+)?(?:class|classes|group|club|workshop|lessons?|course|team)\b|[a-z]{3,}ing\b)")),
)

# Capitalised words that are no name of a pet, a person, a place or a work.
_NOT_NAMES = frozenset(
    """i i'm i've i'd i'll me my we our you your he she they it it's this that these those the a an and but so
    oh wow hey hi hello yes yeah no not thanks thank sorry omg lol haha well also just really what when where who
    how why there here then now today tomorrow yesterday tonight last next""".split()
) | frozenset(MONTHS) | frozenset(WEEKDAYS)
_WORK_WORDS = 8
# Words in -ing that say how, not what a speaker does ("I love seeing you"): no activity.
_NOT_ACTIVITIES = frozenset(
    """being doing going getting thinking seeing feeling looking having making trying saying talking wondering
    hoping planning taking giving coming knowing hearing telling asking sharing reading_about watching_out
    keeping putting finding working living missing needing wanting something anything everything nothing thing
    morning evening during bring sing king spring string ring wing""".split())


@dataclass(frozen=True)
class TurnFact:
    predicate: str
    object: str
    object_type: str
    valid_from: datetime


def _name(raw: str, speaker: str, work: bool, activity: bool = False) -> str | None:
    text = " ".join(raw.strip(" \t,.;:!?'’-").split())
    if not text:
        return None
    words = text.split()
    if work:
        return text if len(words) <= _WORK_WORDS and text.lower() != speaker.lower() else None
    if activity:
        words = [w.lower() for w in words]
        if words[-1] == "classes":
            words[-1] = "class"
        if words[-1] in _NOT_ACTIVITIES or words[0] in _NOT_NAMES or words[0] in _NOT_ACTIVITIES:
            return None
        return " ".join(words)
    # a trailing word that is no name ("Paris Last") is dropped, a leading one refuses the match
    while words and words[-1].lower().strip("'’") in _NOT_NAMES:
        words.pop()
    if not words or words[0].lower().strip("'’") in _NOT_NAMES:
        return None
    name = " ".join(words).removesuffix("'s").removesuffix("’s")
    return name if name.lower() != speaker.lower() and len(name) > 1 else None


def said_start(text: str, at: datetime) -> datetime:
    """When what the turn says happened: the start of the earliest time it names (read against the
    turn's own time), else the turn's time."""
    said = [w for w in time_windows(text, at) if w.end_ms > w.start_ms]
    if not said:
        return at
    start = min(w.start_ms for w in said)
    # windows carry slack for time zones on both sides; the day the turn means starts after it
    return datetime.fromtimestamp(start / 1000, timezone.utc) + DAY_SLACK


def extract(text: str, speaker: str, at: datetime) -> list[TurnFact]:
    """The facts one turn states about its speaker, in the order they are said, each once."""
    when = said_start(text, at)
    found: dict[tuple[str, str], tuple[int, TurnFact]] = {}
    for predicate, object_type, pattern in RULES:
        for m in pattern.finditer(text):
            name = _name(m.group("name"), speaker, object_type == "Work", object_type == "Activity")
            if name is None:
                continue
            key = (predicate, name.lower())
            if key not in found:
                found[key] = (m.start("name"), TurnFact(predicate, name, object_type, when))
    return [f for _, f in sorted(found.values(), key=lambda x: x[0])][:MAX_FACTS]


async def file_facts(client: GraphClient, embedder: Embedder, tenant: str, items: Sequence[EpisodeInput | dict],
                     ids: Sequence[str]) -> list[FactWriteResult]:
    """Files the facts of a batch of turns written just now (`ids` in the order of `items`, as
    `episodes.write_episodes` returned them); returns the writes that took."""
    turns = [(i if isinstance(i, EpisodeInput) else EpisodeInput.model_validate(i), eid) for i, eid in zip(items, ids)]
    turns = [(t, eid) for t, eid in turns if t.customer is None]
    if not turns:
        return []
    filed = {r["id"] for r in await client.run(tenant, q.FILED_BY_RULES, {"ids": sorted({e for _, e in turns}),
                                                                         "label": LABEL})}
    wanted: list[FactInput] = []
    sources: list[tuple[str, str, str]] = []  # (episode, subject uid, object uid) per fact
    seen: set[str] = set()
    for t, eid in turns:
        if eid in filed or eid in seen:
            continue
        seen.add(eid)
        speaker = clean_text(t.speaker, "speaker")
        for f in extract(t.text, speaker, t.at):
            wanted.append(FactInput(subject=speaker, predicate=f.predicate, object=f.object,
                                    agent=t.agent or DEFAULT_AGENT, label=LABEL, valid_from=f.valid_from,
                                    source=eid))
            sources.append((eid, entity_uid(SUBJECT_TYPE, name_key(speaker)),
                            entity_uid(f.object_type, name_key(clean_text(f.object, "object")))))
    if not wanted:
        return []
    results = await facts.write_facts_each(client, tenant, wanted)
    written = [(w, r, src) for w, r, src in zip(wanted, results, sources) if isinstance(r, FactWriteResult)]
    links = {(eid, uid) for _, _, (eid, s_uid, o_uid) in written for uid in (s_uid, o_uid)}
    named = {o_uid: name_key(w.object) for w, _, (_, _, o_uid) in written}
    named |= {s_uid: name_key(w.subject) for w, _, (_, s_uid, _) in written}
    for t, eid in turns:
        grams = word_ngrams(t.text)
        links |= {(eid, uid) for uid, key in named.items() if key in grams}
    if links:
        await client.run(tenant, q.LINK_MENTIONS, {"links": [{"ep": e, "uid": u} for e, u in sorted(links)]})
    done = [r for _, r, _ in written]
    await fact_embeddings.embed_facts(client, embedder, tenant, done)
    return done
