"""A seeded synthetic long-conversation set in the manner of LoCoMo, for bench/recall_hybrid.py.

Each conversation is two named friends talking over many dated sessions (all turns of a session
carry the session's time, as a loader of LoCoMo-style data would give them). Facts about each
speaker (what they painted, baked, read, where they travelled, which group they joined) are
scattered over the sessions among small talk that talks about the same topics without stating a
fact (distractors), and some facts are said as a reply to the friend's question ("Did you finish
that painting?" - "Yes! A sunset over the lake."), so the evidence turn itself does not carry the
topic's words.

Questions come with their evidence turn ids, fixed here, before any system runs:

- single-hop: one fact, asked directly ("What did Melanie paint?");
- temporal: when a fact happened ("When did Caroline go to the support group?"), or which of a
  speaker's repeated activities happened in a named month ("What did Melanie bake in May 2023?");
- multi-hop: a speaker's repeated activity gathered over sessions ("Which cities has Caroline
  visited?"; every occurrence is evidence);
- open-domain: a fact asked in other words, with no topic word of the turn ("Which novel ...");
- adversarial: a fact asked about the wrong speaker ("What did Caroline paint?" when Melanie did);
  the evidence is the turn where the other speaker said it.

Turn ids are LoCoMo's "D<session>:<turn>", prefixed with the conversation ("c3/D4:7") so that
conversations can share one tenant.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

FIRST_NAMES = (
    "Caroline", "Melanie", "Jonas", "Priya", "Tomas", "Aisha", "Mateo", "Yuki", "Freya", "Omar", "Lena", "Kofi",
    "Sofia", "Ravi", "Ingrid", "Diego", "Hana", "Marcus", "Nadia", "Felix", "Amara", "Viktor", "Elif", "Sam",
    "Greta", "Hugo", "Zara", "Ilya", "Chloe", "Tariq", "Maren", "Joel", "Noor", "Pablo", "Astrid", "Kenji",
    "Beatriz", "Luca", "Selin", "Rowan", "Imani", "Oskar", "Leila", "Anton", "Maya", "Dev", "Clara", "Emeka",
)


@dataclass(frozen=True)
class Kind:
    """A kind of fact: how a speaker states it, how a friend asks about it, how questions ask it."""

    key: str
    objs: tuple[str, ...]
    says: tuple[str, ...]  # first person, with {obj}
    ask: str  # the friend's question before a reply-style statement
    replies: tuple[str, ...]  # the reply, with {obj}, without the topic's words
    q_what: str  # with {name}
    q_para: str  # open-domain: no topic word of `says`
    q_when: str  # with {name} and {obj}
    q_in: str  # with {name} and {period}
    q_all: str  # multi-hop aggregation, with {name}
    chat: tuple[str, ...]  # distractors on the topic that state no fact


KINDS: tuple[Kind, ...] = (
    Kind("paint",
         ("a sunset over the lake", "a portrait of my grandmother", "a field of sunflowers", "a stormy harbour",
          "our old farmhouse", "a bowl of lemons", "the city skyline at night", "two horses in the snow"),
         ("I finally finished painting {obj}, it took me three weekends.",
          "Last weekend I painted {obj} with acrylics.", "I just painted {obj}, my best painting so far."),
         "Did you finish that painting you were working on?",
         ("Yes! It turned out to be {obj}, I'm really proud of it.",
          "I did, it's {obj} and it's hanging in the hall now."),
         "What did {name} paint?", "What artwork did {name} create on canvas?", "When did {name} paint {obj}?",
         "What did {name} paint in {period}?", "What subjects has {name} painted?",
         ("Painting always calms me down after a long week.", "I want to take a painting class someday.",
          "Do you still paint when you have time?", "Art museums make me want to paint again.")),
    Kind("bake",
         ("a lemon drizzle cake", "sourdough bread", "cinnamon rolls", "a blueberry pie", "chocolate chip cookies",
          "a carrot cake", "banana bread", "an apple tart"),
         ("I baked {obj} yesterday for the neighbours.", "Over the weekend I baked {obj} from my mom's recipe.",
          "I tried baking {obj} for the first time and it worked!"),
         "How did the baking experiment go?",
         ("Amazing, {obj} came out perfect and the kids ate all of it.", "Really well, {obj} was gone in an hour."),
         "What did {name} bake?", "Which dessert or pastry did {name} make in the oven?", "When did {name} bake {obj}?",
         "What did {name} bake in {period}?", "What treats has {name} baked?",
         ("Baking is my favourite way to relax on Sundays.", "I love the smell of fresh bread in the morning.",
          "Have you baked anything nice lately?", "My oven is so old, baking anything is a gamble.")),
    Kind("read",
         ("The Overstory", "Educated", "Project Hail Mary", "Circe", "The Midnight Library", "Sapiens",
          "Where the Crawdads Sing", "Klara and the Sun"),
         ("I just finished reading {obj} and I couldn't put it down.", "I'm reading {obj} right now, it's wonderful.",
          "My book club picked {obj} and I read it in two days."),
         "What book are you reading these days?",
         ("{obj}, a friend lent it to me and I love it.", "Right now it's {obj}, I read a chapter every night."),
         "What book did {name} read?", "Which novel has {name} been getting through?", "When did {name} read {obj}?",
         "What did {name} read in {period}?", "Which books has {name} read?",
         ("I wish I had more time to read.", "Reading before bed helps me sleep.",
          "Do you have any book recommendations?", "The library near me has a great reading corner.")),
    Kind("travel",
         ("Lisbon", "Kyoto", "Reykjavik", "Marrakech", "Vancouver", "Prague", "Cape Town", "Buenos Aires"),
         ("I just got back from a trip to {obj}, what a beautiful place.",
          "We travelled to {obj} last week for a few days.",
          "My trip to {obj} was the highlight of my year."),
         "How was your trip?",
         ("Incredible, {obj} exceeded every expectation.", "{obj} was magical, I'd go back tomorrow."),
         "Where did {name} travel?", "Which city did {name} go see on vacation?", "When did {name} travel to {obj}?",
         "Where did {name} travel in {period}?", "Which cities has {name} visited?",
         ("I really need a vacation soon.", "Airports stress me out so much.",
          "Where would you travel if you could go anywhere?", "Travel is expensive these days.")),
    Kind("concert",
         ("Coldplay", "Taylor Swift", "Arctic Monkeys", "Adele", "Kendrick Lamar", "Florence and the Machine",
          "Radiohead", "Billie Eilish"),
         ("I went to the {obj} concert yesterday and sang along to every song.",
          "Last night I saw {obj} live, what a show.",
          "We got tickets to see {obj} in concert and it was unforgettable."),
         "How was the show last night?",
         ("Unreal, {obj} played for almost three hours.", "Loud and perfect, {obj} sounded even better live."),
         "Which concert did {name} go to?", "Which band or singer did {name} see perform on stage?",
         "When did {name} see {obj} live?", "Which concert did {name} attend in {period}?",
         "Which artists has {name} seen live?",
         ("Concert tickets are so expensive now.", "I love live music more than anything.",
          "Do you like going to concerts?", "My ears are still ringing from all that music.")),
    Kind("pet",
         ("a beagle puppy named Oscar", "a grey cat called Luna", "a rescue greyhound named Bolt",
          "two goldfish", "a parrot named Kiwi", "a tabby kitten called Miso", "a rabbit named Clover",
          "a corgi named Biscuit"),
         ("We adopted {obj} from the shelter this week!", "Meet the newest family member: {obj}.",
          "I finally got {obj}, the house feels so alive now."),
         "Did you end up getting that pet you talked about?",
         ("Yes, {obj}, and the kids are obsessed.", "We did, {obj}, sleeping on my feet right now."),
         "What pet did {name} adopt?", "Which animal joined {name}'s household?", "When did {name} adopt {obj}?",
         "What pet did {name} get in {period}?", "What pets does {name} have?",
         ("Pets are so much work but so worth it.", "I always wanted a dog as a kid.",
          "Do you think a cat or a dog suits a small flat?", "The shelter near us is always full of animals.")),
    Kind("class",
         ("pottery", "salsa dancing", "Italian", "rock climbing", "photography", "woodworking", "yoga", "coding"),
         ("I signed up for a {obj} class at the community center.", "I started taking {obj} lessons on Tuesdays.",
          "My first {obj} class was yesterday and I loved it."),
         "How are the lessons going?",
         ("Great, {obj} is harder than it looks but so fun.", "I'm hooked, {obj} is the best part of my week."),
         "What class did {name} sign up for?", "Which new skill is {name} learning with a teacher?",
         "When did {name} start {obj} lessons?", "What lessons did {name} start in {period}?",
         "What classes has {name} taken?",
         ("I keep wanting to learn something new.", "Evening classes are hard after work.",
          "Have you ever taken a class just for fun?", "The community center has so many courses.")),
    Kind("volunteer",
         ("the animal shelter", "the food bank", "the children's hospital", "a beach clean-up",
          "the homeless shelter", "the public library", "a tree planting day", "the senior center"),
         ("I volunteered at {obj} on Saturday, it was so rewarding.", "I've started volunteering at {obj} every month.",
          "Yesterday I spent the whole day volunteering at {obj}."),
         "What did you do with your Saturday?",
         ("I helped out at {obj}, it really put things in perspective.",
          "I spent it at {obj}, giving back feels good."),
         "Where did {name} volunteer?", "Which cause did {name} give their free time to?",
         "When did {name} volunteer at {obj}?", "Where did {name} volunteer in {period}?",
         "Where has {name} volunteered?",
         ("I want to give back to the community more.", "Volunteering is good for the soul.",
          "Do you know any places that need help on weekends?", "Charity work can be exhausting.")),
    Kind("group",
         ("an LGBTQ support group", "a grief support group", "a running club", "a chess club", "a parents' group",
          "a choir", "a knitting circle", "a hiking club"),
         ("I went to {obj} yesterday and met so many kind people.", "I joined {obj} and went to my first meeting.",
          "Going to {obj} this week really helped me."),
         "Did you go to that meeting you mentioned?",
         ("I did, {obj} felt so welcoming.", "Yes, {obj} met in the park and I loved it."),
         "Which group did {name} join?", "What community gathering does {name} attend?",
         "When did {name} go to {obj}?", "Which group did {name} go to in {period}?",
         "Which groups has {name} been part of?",
         ("It's hard to find people who understand you.", "Meeting new people makes me nervous.",
          "Being part of a community matters a lot to me.", "Do you go to any meetups?")),
    Kind("hike",
         ("Mount Rainier", "the Grand Canyon rim trail", "Ben Nevis", "the Pacific Crest Trail", "Table Mountain",
          "the Dolomites", "Mount Fuji", "the Appalachian Trail"),
         ("I hiked {obj} last weekend, my legs are still sore.", "We did a hike on {obj} and the views were unreal.",
          "I climbed {obj} with my brother yesterday."),
         "How was the hike?",
         ("Tough but beautiful, {obj} had snow at the top.", "Worth every step, {obj} is breathtaking."),
         "Where did {name} hike?", "Which mountain or trail did {name} conquer on foot?",
         "When did {name} hike {obj}?", "Where did {name} hike in {period}?", "Where has {name} hiked?",
         ("I need better boots before my next hike.", "Hiking is the best way to clear my head.",
          "Do you like being outdoors?", "The weather ruined our walking plans again.")),
    Kind("garden",
         ("tomatoes", "roses", "basil and mint", "sunflowers", "strawberries", "lavender", "pumpkins",
          "chilli peppers"),
         ("I planted {obj} in the garden this weekend.", "My {obj} are finally growing in the backyard.",
          "I started growing {obj} on the balcony."),
         "How's the garden coming along?",
         ("Lovely, the {obj} are coming up nicely.", "Slowly, but the {obj} are thriving."),
         "What did {name} plant?", "Which crops or flowers is {name} cultivating at home?",
         "When did {name} plant {obj}?", "What did {name} plant in {period}?", "What has {name} grown?",
         ("Gardening teaches you patience.", "Our soil is terrible for growing anything.",
          "Do you have a garden?", "Slugs ate everything I planted last time.")),
    Kind("instrument",
         ("the violin", "the guitar", "the piano", "the ukulele", "the drums", "the cello", "the clarinet",
          "the flute"),
         ("I started learning to play {obj} this month.", "I've been practising {obj} every evening.",
          "I bought {obj} and I'm teaching myself to play."),
         "Are you still practising every day?",
         ("Yes, {obj} is starting to sound less awful.", "Every evening, {obj} is my new obsession."),
         "What instrument is {name} learning?", "Which musical instrument has {name} taken up?",
         "When did {name} start playing {obj}?", "What instrument did {name} pick up in {period}?",
         "Which instruments does {name} play?",
         ("Music has always been part of my life.", "I wish I had learned music as a child.",
          "Do you play anything?", "Practising takes so much discipline.")),
    Kind("cook",
         ("a Thai green curry", "homemade ramen", "paella", "lasagna", "mushroom risotto", "tacos al pastor",
          "a Moroccan tagine", "dumplings"),
         ("I cooked {obj} for dinner with friends last night.", "I made {obj} from scratch yesterday.",
          "Tonight I cooked {obj} and it was delicious."),
         "What did you make for the dinner party?",
         ("{obj}, and everyone asked for seconds.", "I went with {obj}, it took all afternoon."),
         "What did {name} cook?", "Which dish did {name} prepare for guests?", "When did {name} cook {obj}?",
         "What did {name} cook in {period}?", "Which dishes has {name} cooked?",
         ("Cooking for one is never fun.", "I love trying recipes from other countries.",
          "What's your favourite thing to eat?", "My kitchen is tiny, cooking anything is a challenge.")),
    Kind("race",
         ("a 5k charity run", "the city half marathon", "a 10k trail race", "a triathlon", "a cycling sportive",
          "an obstacle race", "a swim across the bay", "a marathon"),
         ("I completed {obj} on Sunday and raised money for the hospice.", "I ran {obj} yesterday and beat my goal.",
          "I finished {obj} this weekend, so tired but happy."),
         "How did the big event go on Sunday?",
         ("I finished! {obj}, and I raised over two thousand dollars.", "{obj} done, I didn't even stop once."),
         "What race did {name} complete?", "Which endurance event did {name} finish?",
         "When did {name} complete {obj}?", "What race did {name} do in {period}?",
         "Which races has {name} done?",
         ("I should start exercising again.", "Training in the rain is miserable.",
          "Are you doing any sport lately?", "My knees hate long distances.")),
)

GREETINGS = ("Hey {other}! Long time no talk, how have you been?", "Hi {other}, so good to hear from you!",
             "{other}! I was just thinking about you.", "Hey {other}, how was your week?",
             "Hello {other}, I have so much to tell you.")
GREETING_REPLIES = ("Hi! I've been good, busy as always.", "Hey! It's been a crazy few weeks.",
                    "Good to hear from you too! Things are fine here.", "Hi there, it's been a while!")
REACTIONS = ("Wow, that's amazing, {other}!", "That sounds wonderful.", "I'm so happy for you!",
             "No way, that's so cool.", "You always inspire me.", "That must have felt great.",
             "I love that for you.", "Tell me more about it sometime!", "Haha, that's so you.",
             "That's fantastic news.")
SMALL_TALK = ("Work has been really hectic lately.", "I've been sleeping badly this week.",
              "The weather has been so strange.", "My family is visiting soon.", "I'm trying to eat healthier.",
              "I watched a great documentary the other day.", "My phone broke again, typical.",
              "I've been thinking about changing jobs.", "The kids have been keeping me busy.",
              "I finally cleaned out the garage.", "We should catch up in person soon.",
              "I'm so grateful for our friendship.", "Honestly, I just need a quiet weekend.",
              "Life has been a rollercoaster.", "I started journaling in the mornings.",
              "Coffee is the only thing keeping me going.", "I can't believe how fast this year is going.")
OPENERS = ("", "", "Honestly, ", "You know, ", "Ugh, ", "Funny thing, ", "Anyway, ", "So, ", "Oh, and ")
TAILS = ("", "", " How about you?", " Anyway.", " Just saying.", " Sorry, random thought.", " Haha.",
         " What do you think?")
GOODBYES = ("Talk soon, take care!", "Gotta run, bye for now!", "Catch you later!", "Take care, speak soon.")

MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December")
TYPES = ("single-hop", "multi-hop", "temporal", "open-domain", "adversarial")


@dataclass
class Turn:
    id: str
    session: str
    speaker: str
    text: str
    at: datetime


@dataclass
class Question:
    id: str
    conversation: int
    type: str
    q: str
    evidence: list[str]


@dataclass
class Conversation:
    index: int
    speakers: tuple[str, str]
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)


@dataclass
class _Event:
    owner: int  # 0 or 1
    kind: Kind
    obj: str
    reply_style: bool
    session: int = -1
    turn_id: str = ""


def _period(at: datetime) -> str:
    return f"{MONTH_NAMES[at.month - 1]} {at.year}"


def conversation(index: int, *, sessions: int = 20, turns_per_session: int = 15, seed: int = 0) -> Conversation:
    """Conversation `index` of the set with this seed: same arguments, same turns and questions."""
    r = random.Random(f"locomo-like/{seed}/{index}")
    names = r.sample(FIRST_NAMES, 2)
    conv = Conversation(index, (names[0], names[1]))
    # sessions: two to five weeks apart, from a start in 2022 or 2023, at a time of day
    start = datetime(2022, 1, 1, tzinfo=timezone.utc) + timedelta(days=r.randrange(0, 540))
    times = []
    at = start
    for _ in range(sessions):
        at = at + timedelta(days=r.randrange(10, 36))
        times.append(at.replace(hour=r.randrange(9, 21), minute=r.randrange(60)))

    # each speaker: single facts (one occurrence) and repeated ones (2-3, in different sessions)
    events: list[_Event] = []
    kinds = list(KINDS)
    r.shuffle(kinds)
    plan = {0: (kinds[0:4], kinds[4:6]), 1: (kinds[6:10], kinds[10:12])}
    for owner, (singles, repeats) in plan.items():
        for kind in singles:
            events.append(_Event(owner, kind, r.choice(kind.objs), reply_style=r.random() < 0.4))
        for kind in repeats:
            for obj in r.sample(kind.objs, r.choice((2, 3))):
                events.append(_Event(owner, kind, obj, reply_style=r.random() < 0.3))
    # repeated facts of one kind go to distinct sessions in distinct months
    by_session: dict[int, list[_Event]] = {}
    for kind_events in _group(events):
        months_used: set[tuple[int, int]] = set()
        for ev in kind_events:
            choices = [s for s in range(1, sessions) if (times[s].year, times[s].month) not in months_used
                       and len(by_session.get(s, [])) < 3]
            ev.session = r.choice(choices or list(range(1, sessions)))
            months_used.add((times[ev.session].year, times[ev.session].month))
            by_session.setdefault(ev.session, []).append(ev)

    for s in range(sessions):
        conv.turns.extend(_session(r, conv, s, times[s], by_session.get(s, []), turns_per_session))
    conv.questions = _questions(r, conv, events, times)
    return conv


def _group(events: list[_Event]) -> list[list[_Event]]:
    out: dict[tuple[int, str], list[_Event]] = {}
    for ev in events:
        out.setdefault((ev.owner, ev.kind.key), []).append(ev)
    return list(out.values())


def _session(r: random.Random, conv: Conversation, s: int, at: datetime, events: list[_Event],
             length: int) -> list[Turn]:
    a, b = conv.speakers
    first = r.randrange(2)
    lines: list[tuple[int, str, _Event | None]] = [
        (first, r.choice(GREETINGS).format(other=conv.speakers[1 - first]), None),
        (1 - first, r.choice(GREETING_REPLIES), None)]
    blocks: list[list[tuple[int, str, _Event | None]]] = []
    for ev in events:
        other = 1 - ev.owner
        if ev.reply_style:
            blocks.append([(other, ev.kind.ask, None),
                           (ev.owner, r.choice(ev.kind.replies).format(obj=ev.obj), ev),
                           (other, r.choice(REACTIONS).format(other=conv.speakers[ev.owner]), None)])
        else:
            text = r.choice(ev.kind.says).format(obj=ev.obj)
            blocks.append([(ev.owner, text[0].upper() + text[1:], ev),
                           (other, r.choice(REACTIONS).format(other=conv.speakers[ev.owner]), None)])
    filler = max(0, length - 3 - sum(len(b) for b in blocks))
    pool = [line for kind in KINDS for line in kind.chat] + list(SMALL_TALK)
    for line in r.sample(pool, min(filler, len(pool))):  # talk that states no fact; some on a fact's topic
        opener = r.choice(OPENERS)
        keep_case = not opener or line.startswith(("I ", "I'"))
        text = opener + (line if keep_case else line[0].lower() + line[1:]) + r.choice(TAILS)
        blocks.append([(r.randrange(2), text, None)])
    r.shuffle(blocks)
    for block in blocks:
        lines.extend(block)
    lines.append((r.randrange(2), r.choice(GOODBYES), None))
    out = []
    for i, (who, text, ev) in enumerate(lines, start=1):
        tid = f"c{conv.index}/D{s + 1}:{i}"
        if ev is not None:
            ev.turn_id = tid
        out.append(Turn(tid, f"c{conv.index}/session_{s + 1}", conv.speakers[who], text, at))
    return out


def _questions(r: random.Random, conv: Conversation, events: list[_Event], times: list[datetime]) -> list[Question]:
    qs: list[tuple[str, str, list[str]]] = []
    groups = _group(events)
    for group in groups:
        ev = group[0]
        name, other = conv.speakers[ev.owner], conv.speakers[1 - ev.owner]
        k = ev.kind
        if len(group) == 1:
            qs.append(("single-hop", k.q_what.format(name=name), [ev.turn_id]))
            qs.append(("open-domain", k.q_para.format(name=name), [ev.turn_id]))
            qs.append(("temporal", k.q_when.format(name=name, obj=ev.obj), [ev.turn_id]))
            other_has = any(e.owner != ev.owner and e.kind.key == k.key for e in events)
            if not other_has:
                qs.append(("adversarial", k.q_what.format(name=other), [ev.turn_id]))
        else:
            qs.append(("multi-hop", k.q_all.format(name=name), [e.turn_id for e in group]))
            for e in group:
                qs.append(("temporal", k.q_in.format(name=name, period=_period(times[e.session])), [e.turn_id]))
    return [Question(f"c{conv.index}/q{i}", conv.index, t, q, ev) for i, (t, q, ev) in enumerate(qs)]


def conversations(indexes: range | list[int], *, sessions: int = 20, turns_per_session: int = 15,
                  seed: int = 0) -> list[Conversation]:
    return [conversation(i, sessions=sessions, turns_per_session=turns_per_session, seed=seed) for i in indexes]


__all__ = ["Conversation", "Question", "Turn", "conversation", "conversations", "KINDS", "TYPES"]
