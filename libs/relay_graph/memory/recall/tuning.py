"""Recall's knobs, in one place: the fusion's weights, how many candidates each signal ranks, and
the bounds that keep a busy entity or speaker cheap. Other modules read them at call time, so a
bench that moves one (`tuning.WEIGHTS[...]`, `tuning.RRF_K = ...`) moves recall with it.

How they were chosen (docs/benchmarks.md has the figures): first on the dev split of
bench/recall_hybrid.py (synthetic), then on the dev half of bench/locomo.py (real LoCoMo
conversations; its test half is never tuned on). Speakers from 0.5 to 1.0 (who said it is what a
question about a person turns on), RRF k from 60 to 30 (the first ranks count for more), two
neighbours each side instead of one (the answer is often two turns on, after the other speaker
asks back), each signal's list from 30 to HYBRID_POOL (the evidence turn of small talk is often
past the 30th of every signal) and the neighbour seeds from 5 to 10. Words and neighbours stay at
0.5: they are the broad ones (a topic word is in every turn of small talk about that topic; a
neighbour is only beside a hit). The community signal reaches further than `joined`, so it weighs
half as much.

A question that names nothing on file and no time, and holds no specific word the embedder cannot
read (`question.Kind.MEANING`), is fused with MEANING_WEIGHTS instead; one that holds such a word
(`Kind.WORDS`) with WORDS_WEIGHTS. Their weights, NEAR_SEED, COMMON_SHIFT and ASKS_ONLY were chosen
on the dev halves of bench.implicit_cues (both of its sets) and bench.locomo together: the most cues
found at every k with LoCoMo's dev half within a question of where it was at every k.
"""

from __future__ import annotations

RRF_K = 30
MAX_K = 100
MAX_QUESTION = 2_000
OVERFETCH = 3  # vector candidates per returned item
MIN_CANDIDATES = 30
# Without a subject each signal ranks at least this many before the fusion.
HYBRID_POOL = 100
CAP = 500  # episodes one entity contributes before ranking (its newest)
PER_ENTITY_FACTS = 50  # facts one named entity contributes before ranking (its newest)
FUZZY_LIMIT = 20  # full-text candidates considered per question
MAX_FUZZY_QUERIES = 8
TIME_SCAN = 2_000  # turns one time window contributes before ranking
WORDS_SCAN = 100  # best full-text matches whose distance breaks score ties
SPEAKER_CAP = 400  # a speaker's newest turns ranked by meaning (a LoCoMo speaker has ~150-300)
SPEAKER_NAMED_CAP = 100  # newest turns naming a speaker
NEIGHBOUR_SEEDS = 10  # the strongest hits whose turns before and after join the fusion
NEIGHBOUR_REACH = 2  # turns on each side of a seed that join as its neighbours
DERIVED_SCAN = 4  # facts the answer's candidates derived, read per returned item (those of the answer are kept)
MAX_WORDS = 16  # full-text terms per question
JOIN_PER_ENTITY = 20  # entities one fact away that a named entity joins to
COMMUNITY_MEMBERS = 20  # entities of a named entity's community whose episodes join the signal
COMMUNITY_CAP = 100  # newest episodes one of those members contributes
SAID_SPAN_MS = 400 * 86_400_000  # the longest span a turn's time expression says ("last year", with slack)

# The community signal's weight when it is on. It is off (WEIGHTS["community"] 0, so its statement
# is not sent): on every bench it earned nothing (LoCoMo's and bench.recall_hybrid's conversations
# have no communities; at 100,000 facts it cost p95 time), while the console and netops still use
# the communities. A tenant whose questions do reach a neighbour's neighbour turns it on here.
COMMUNITY_WEIGHT = 0.5
# Weighted RRF: what each signal's rank is worth.
WEIGHTS = {"vector": 1.0, "distinct": 0.0, "entities": 1.0, "joined": 1.0, "words": 0.5, "speakers": 1.0, "time": 1.0,
           "dated": 1.0, "spoken_then": 1.0, "community": 0.0, "neighbours": 0.5, "near_neighbours": 0.5}
# A question of meaning (question.Kind.MEANING: it names no speaker, no entity on file and no
# time, and its words are all ones the embedder reads): meaning leads, its words are not searched
# (what it shares with a turn in such words is as often a coincidence as a clue), and a neighbour
# only breaks near-ties, for a neighbour of whatever is near in meaning is no answer to a remark
# about something else (bench.implicit_cues; docs/benchmarks.md) - unless it is beside a near hit
# (NEAR_SEED: `near_neighbours`, which rank right after that hit). Meaning is asked twice: as the
# question is (`vector`) and without the tenant's common ground (`distinct`), which leads; a tenant
# too small to have common ground gives both weights to `vector`.
MEANING_WEIGHTS = WEIGHTS | {"words": 0.0, "distinct": 1.0, "vector": 0.5, "neighbours": 0.05, "near_neighbours": 0.25}
# A question of meaning that holds a specific word meaning cannot see: the same, and its words searched.
WORDS_WEIGHTS = MEANING_WEIGHTS | {"words": WEIGHTS["words"]}
# In a question of meaning, only the turns beside a hit this near in meaning (similarity) join as
# neighbours: a turn that all but asked the question before ("Did you finish that pottery piece?")
# has its answer beside it; the turns beside whatever small talk is merely nearest do not.
NEAR_SEED = 0.6
# A word the embedder cannot read is specific (question.specific) when at most this share of the
# tenant's turns hold it, or SPECIFIC_MIN_TURNS of them in a small tenant; a word found in DF_SCAN
# turns or more never is.
SPECIFIC_SHARE = 0.05
SPECIFIC_MIN_TURNS = 3
DF_SCAN = 500

# How much nearer in meaning another speaker's turn must be than the named speaker's best before
# recall says the question is not in memory, and how near the named speaker's best may be at most:
# a speaker who said something that near was talking about it too ("what did you think of Mel's
# race?"), so the question is theirs. Chosen together on the dev half of bench.locomo as the pair
# that catches the most adversarial questions while a not_in_graph there is right at least as
# often as it is wrong (docs/benchmarks.md).
VOICE_MARGIN = 0.12
VOICE_CEILING = 0.45

# A question of meaning is also asked without the tenant's common ground (`distinct`;
# memory.recall.common_ground): the mean of its first COMMON_SAMPLE turns' vectors, COMMON_SHIFT
# of it taken away from the question's, once the tenant has COMMON_MIN turns; read again after
# COMMON_TTL_S (COMMON_YOUNG_TTL_S while the tenant has fewer turns than the sample).
COMMON_SAMPLE = 128
COMMON_MIN = 20
COMMON_SHIFT = 0.7
COMMON_TTL_S = 600.0
COMMON_YOUNG_TTL_S = 10.0
# In a question of meaning, what the score of a turn that only asks (question.asks_only) is worth:
# a question asked earlier holds no fact a later remark can depend on, its answer does (and a near
# one whose answer is found ranks right after that answer).
ASKS_ONLY = 0.7
