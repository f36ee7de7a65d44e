"""The memory benchmark (`make bench-memory`, `python -m bench.memory`): seeded storylines played
through the desk, questions with gold answers fixed by the storyline, answered by Relay (its tools)
and by a vector store over the same conversations, scored per question type. See bench.memory.run."""
