"""The read path: `recall(q)` answers with the episodes that matter to a question, how each was
found, and the current facts linked to them. It serves a support desk (customers, sessions,
facts) and any multi-session conversation (two friends over months of dated sessions) alike.

Its parts, by what they hold:

- `answer`: `recall` itself, its round trips and the answer's shape;
- `question`: the arguments checked, the question's full-text query, its words without speakers;
- `question_vector`: the question's vector, embedded without the speakers it names;
- `anchors`: the entities the question (or the subject argument) names;
- `signals`: the ranked lists of episodes (meaning, entities, speakers, words, time, ...);
- `fusion`: their weighted reciprocal-rank fusion, and the path of each answered episode;
- `facts`: the facts that come with the answer;
- `tuning`: every weight and bound, and how they were chosen.

Its Cypher is in `memory.queries.recall`.
"""

from relay_graph.memory.queries import recall as q  # noqa: F401 (the statements, for callers that watch them)
from relay_graph.memory.recall.anchors import Anchor, Subject, find_entities, resolve_subject
from relay_graph.memory.recall.answer import recall
from relay_graph.memory.recall.facts import fact_view
from relay_graph.memory.recall.question import fulltext_query, without_words
from relay_graph.memory.recall.tuning import MAX_QUESTION, RRF_K, WEIGHTS

__all__ = ["recall", "find_entities", "resolve_subject", "Subject", "fulltext_query", "without_words", "Anchor",
           "fact_view", "MAX_QUESTION", "RRF_K", "WEIGHTS"]
