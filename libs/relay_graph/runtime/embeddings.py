"""Local sentence embeddings (fastembed, all-MiniLM-L6-v2, 384 dims), batched and cached so a
text is embedded once per process."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from relay_graph.runtime.model_files import ensure_model, is_ready

DIMENSION = 384
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
_ENDINGS = ("s", "es", "ed", "d", "ing", "ly")  # English endings a known word may carry


def _without_spinning(model, onnx_file: Path, threads: int) -> None:
    """The model's session made again with its intra-op threads sleeping when idle. onnxruntime's
    threads spin between operators by default: beside a database and an event loop on two cores
    two spinning threads ran a question 2x slower than one, while two that sleep ran recall 1-2.7
    ms faster than one (bench/memory_core.py, alternated runs). fastembed (pinned 0.9.1) exposes no
    such option, so its text model (`TextEmbedding.model`, made with lazy_load) gets this session
    and its tokenizer, which it would otherwise load with its own session on the first call."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    text_model = model.model
    text_model.model = ort.InferenceSession(str(onnx_file), options, providers=["CPUExecutionProvider"])
    text_model._ensure_tokenizer()


class Embedder:
    """Turns texts into unit vectors. `embed` batches the texts it has not seen before."""

    dimension = DIMENSION

    def __init__(self, model_dir: Path | None = None, *, batch_size: int = 64, cache_size: int = 20_000,
                 threads: int | None = None):
        from fastembed import TextEmbedding  # imported here: loading onnxruntime is slow

        # threads: onnxruntime's intra-op threads (None: one per core). A process that embeds in a
        # thread while it also writes (a pipeline) does better with 1 on a small machine: spinning
        # model threads otherwise take the cores the writer and the database need. Two or more
        # given here sleep when idle instead (`_without_spinning`).
        if model_dir is not None:
            if not is_ready(model_dir):
                ensure_model(model_dir)
            sleeping = threads is not None and threads > 1
            self._model = TextEmbedding(model_name=MODEL_NAME, specific_model_path=str(model_dir), threads=threads,
                                        lazy_load=sleeping)  # its own session would be made and dropped
            if sleeping:
                _without_spinning(self._model, Path(model_dir) / "model.onnx", threads)
        else:  # elsewhere fastembed may fetch the model itself
            self._model = TextEmbedding(model_name=MODEL_NAME, threads=threads)
        self.batch_size = batch_size
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()
        self.texts_embedded = 0  # how many texts actually went through the model
        self._words: frozenset[str] | None = None  # the model's whole-word vocabulary, read once

    @staticmethod
    def _key(text: str) -> str:
        return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [self._key(t) for t in texts]
        with self._lock:
            missing = {k: t for k, t in zip(keys, texts) if k not in self._cache}
        if missing:
            # similar lengths side by side: each model batch is padded to its longest text, so
            # short claims mixed with long ones cost a quarter more
            order = sorted(missing, key=lambda k: len(missing[k]))
            vectors = self._model.embed([missing[k] for k in order], batch_size=self.batch_size)
            fresh = {k: np.asarray(v, dtype=np.float32).tolist() for k, v in zip(order, vectors)}
            with self._lock:
                self.texts_embedded += len(fresh)
                for k, v in fresh.items():
                    self._cache[k] = v
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
        with self._lock:
            out = []
            for k in keys:
                v = self._cache.get(k)
                if v is None:  # evicted between the two locks under heavy churn
                    v = np.asarray(next(iter(self._model.embed([texts[keys.index(k)]]))), dtype=np.float32).tolist()
                out.append(v)
            return out

    def knows_word(self, word: str) -> bool:
        """Whether the model's vocabulary holds the lower-case word whole, or with a plural or
        verb ending off ("cravings" -> "craving"): a word it must spell out in pieces
        ("quillfeather" -> quill ##fe ##ather) is one its vectors barely see, so recall leaves
        such words to the full-text signal (memory.recall.question.Kind)."""
        vocab = self._vocab()
        w = word.lower()
        return w in vocab or any(w.endswith(end) and w[:-len(end)] in vocab for end in _ENDINGS)

    def _vocab(self) -> frozenset[str]:
        if self._words is None:
            model = self._model.model
            if getattr(model, "tokenizer", None) is None:  # a lazily loaded model has none yet
                model._ensure_tokenizer()
            self._words = frozenset(t for t in model.tokenizer.get_vocab() if t.isalpha())
        return self._words

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        # The model is CPU-bound; keep it off the event loop.
        return await asyncio.to_thread(self.embed, list(texts))

    def submit(self, texts: Sequence[str], then: Callable[[list[list[float]]], Any] | None = None) -> asyncio.Future:
        """`aembed` started now: the model thread begins before the caller's next await (a
        coroutine would begin only when the event loop gets to it). `then`, if given, shapes the
        vectors in that thread too, off the event loop."""
        texts = list(texts)
        if then is None:
            return asyncio.get_running_loop().run_in_executor(None, self.embed, texts)
        return asyncio.get_running_loop().run_in_executor(None, lambda: then(self.embed(texts)))
