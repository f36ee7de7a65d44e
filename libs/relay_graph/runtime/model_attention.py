"""One step of deriving Relay's model (`model_files.derive_model`): each encoder layer's
self-attention becomes one onnxruntime `Attention` node.

onnxruntime's BERT fusions do not recognise the attention of the pinned file: it was exported by
torch's dynamo exporter, whose scaled-dot-product attention masks with a boolean `Where`, guards
the softmax against NaN and transposes K through a Shape/Slice/Concat/Reshape detour (fusion log:
"Expect Softmax, Got Where"). So that graph ran 25 nodes per layer for what `Attention` does in
one, and its Q, K and V projections as three products where `Attention` runs one; dynamic
quantisation then turns `Attention` into `QAttention` (int8). Measured through fastembed on one
thread, the two models taking turns on 600 questions of 12-22 tokens: 7.45 -> 6.63 ms per
question (median). Vectors within cosine 0.9999 (mean over 736 conversation turns, min 0.991) of
the model derived without this step, and as far from the float model as those were (0.9896 mean).

The rewrite reads the graph by the names this export gives its weights
(`inner.encoder.layer.{i}.attention.self.query.bias`, ...), builds the fused node from the same
weights (Q, K, V side by side, scale 1/sqrt(head size): the export scales Q and K each by its
square root), and leaves the old nodes to `prune_graph`. `check_same_output` runs the float graph
before and after on a padded batch: a file that does not fuse the same way fails loudly instead of
giving other vectors.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

MASK = "relay_mask_int32"


class AttentionRewriteFailed(RuntimeError):
    pass


def fuse_attention(source: Path, target: Path, *, layers: int, heads: int) -> None:
    """`source` (a float graph) with each layer's self-attention as one `Attention` node, to `target`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.transformers.onnx_model import OnnxModel

    model = onnx.load(str(source))
    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    producer = {out: n for n in graph.node for out in n.output}

    def bias_add(bias: str):
        found = [n for n in graph.node if n.op_type == "Add" and bias in n.input]
        if len(found) != 1:
            raise AttentionRewriteFailed(f"expected one Add of {bias}, found {len(found)}")
        return found[0]

    def product_before(add, bias: str):
        (other,) = [i for i in add.input if i != bias]
        node = producer.get(other)
        if node is None or node.op_type != "MatMul" or node.input[1] not in weights:
            raise AttentionRewriteFailed(f"{bias} is not added to a product with a weight")
        return node

    fused = []
    for layer in range(layers):
        prefix = f"inner.encoder.layer.{layer}.attention."
        products = {}
        for part in ("query", "key", "value"):
            bias = f"{prefix}self.{part}.bias"
            products[part] = (product_before(bias_add(bias), bias), bias)
        inputs = {mm.input[0] for mm, _ in products.values()}
        if len(inputs) != 1:
            raise AttentionRewriteFailed(f"layer {layer}: Q, K and V read different inputs")
        w = np.concatenate([numpy_helper.to_array(weights[mm.input[1]]) for mm, _ in products.values()], axis=1)
        b = np.concatenate([numpy_helper.to_array(weights[bias]) for _, bias in products.values()])
        out_bias = f"{prefix}output.dense.bias"
        out_product = product_before(bias_add(out_bias), out_bias)
        attended = out_product.input[0]  # what the output projection reads: the heads, merged
        producer[attended].output[0] = attended + "_unused"  # the old path ends nowhere: pruned
        w_name, b_name = f"relay_qkv_weight_{layer}", f"relay_qkv_bias_{layer}"
        graph.initializer.extend([numpy_helper.from_array(w.astype(np.float32), w_name),
                                  numpy_helper.from_array(b.astype(np.float32), b_name)])
        fused.append(helper.make_node("Attention", [inputs.pop(), w_name, b_name, MASK], [attended],
                                      name=f"relay_attention_{layer}", domain="com.microsoft", num_heads=heads))
    graph.node.extend([helper.make_node("Cast", ["attention_mask"], [MASK], to=TensorProto.INT32,
                                        name="relay_mask_cast"), *fused])
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    rewritten = OnnxModel(model)
    rewritten.prune_graph()
    rewritten.topological_sort()
    onnx.save(rewritten.model, str(target))


def check_same_output(before: Path, after: Path, tokenizer: Path, *, tolerance: float = 1e-4) -> float:
    """Both float graphs on a padded batch; the largest difference on real tokens (raises above
    `tolerance`)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer))
    tok.no_truncation()
    tok.enable_padding()
    enc = tok.encode_batch(["ok", "Is your router the TP-Link Archer C6? It drops every evening around eight.",
                            "What did Caroline paint last summer?"])
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
    outs = []
    for path in (before, after):
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        outs.append(session.run(None, {k: v for k, v in feeds.items() if k in names})[0])
    diff = float(np.abs((outs[0] - outs[1]) * mask[..., None]).max())
    if not diff <= tolerance:
        raise AttentionRewriteFailed(f"the fused graph differs from the plain one by {diff:g}")
    return diff
