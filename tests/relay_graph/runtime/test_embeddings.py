"""The embedder: more than one model thread sleeps when idle, and gives the vectors one thread gives."""

from __future__ import annotations

import numpy as np
import pytest

from relay_graph.runtime.embeddings import Embedder

pytestmark = [pytest.mark.model]

TEXTS = ["where does Alice Rao live and what plan is Alice on?", "ok", "Is your router the TP-Link Archer C6?"]


def test_two_model_threads_sleep_when_idle_and_give_the_same_vectors(graph_settings):
    two = Embedder(graph_settings.model_dir, threads=2)
    options = two._model.model.model.get_session_options()
    assert options.intra_op_num_threads == 2
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    one = Embedder(graph_settings.model_dir, threads=1)
    assert one._model.model.model.get_session_options().intra_op_num_threads == 1
    assert np.allclose(np.array(two.embed(TEXTS)), np.array(one.embed(TEXTS)), atol=1e-5)
    assert two.texts_embedded == len(TEXTS)  # through the replaced session, batched once


async def test_submit_shapes_the_vectors_in_the_model_thread(embedder):
    import threading

    from relay_graph.memory.episodes import wire_vector

    seen = {}

    def shape(vectors):
        seen["thread"] = threading.current_thread()
        return wire_vector(vectors[0])

    shaped = await embedder.submit(TEXTS[:1], shape)
    assert seen["thread"] is not threading.main_thread()
    assert str(shaped) == str(wire_vector(embedder.embed(TEXTS[:1])[0]))
    assert await embedder.submit(TEXTS[:1]) == embedder.embed(TEXTS[:1])  # without `then`: the vectors
