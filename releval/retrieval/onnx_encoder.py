"""The dense encoder on ONNX Runtime: the same model, run as an exported graph.

A sentence-transformers model of a transformer, a pooling (mean or CLS token) and an optional
normalisation — the dense route's default model among them — is run as: the model's own
tokenizer (padding to the batch's longest text, truncating at ``max_length``), its
transformer exported once to an ONNX graph and run by onnxruntime on every core, then the
pooling and normalisation in numpy. v = Σ_t m_t·h_t / Σ_t m_t (mean; m the attention mask)
or h_0 (CLS), then v / ‖v‖ where the model normalises. The vectors equal the
SentenceTransformer's to float rounding (tests/retrieval/test_onnx_encoder.py holds cosine ≥
0.999 per text; measured: ≥ 0.9999999).

The graph is exported per model digest into the per-machine cache
(``releval.machine_cache.root() / "onnx"``), written to a temporary file and renamed under an
exclusive lock, so concurrent runs export it once and never read half a file. A model with
other modules (a Dense layer, a second pooling) is refused in one line naming
``backend: torch``.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import warnings
from pathlib import Path

import numpy as np

from releval.errors import InputError
from releval.retrieval.embeddings import check_max_length

POOLINGS = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls"}
RUNS = ("sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
        "sentence_transformers.models.Normalize")


def _layout(path: Path) -> tuple[str, bool]:
    """(pooling, normalised) of the model at ``path``; InputError for a layout this encoder
    does not run."""
    if not (path / "modules.json").is_file() or not (path / "config.json").is_file():
        raise InputError(f"cannot load a model from {path}: no sentence-transformers "
                         "modules.json and config.json there", "dense")
    modules = json.loads((path / "modules.json").read_text())
    kinds = [m.get("type") for m in modules]
    ok = kinds[:2] == list(RUNS[:2]) and kinds[2:] in ([], [RUNS[2]])
    pooling = None
    if ok:
        config = json.loads((path / modules[1]["path"] / "config.json").read_text())
        chosen = [POOLINGS.get(k) for k, on in config.items() if k.startswith("pooling_mode")
                  and on]
        pooling = chosen[0] if chosen in (["mean"], ["cls"]) else None
    if pooling is None:
        raise InputError(f"the model in {path} is not a transformer, a mean or CLS pooling and "
                         "an optional normalisation, which the onnx backend runs: set "
                         "`backend: torch` for it", "dense")
    return pooling, kinds[2:] == [RUNS[2]]


@contextlib.contextmanager
def _locked(target: Path):
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.with_name(target.name + ".lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def export(path: Path, target: Path, names: list[str]) -> Path:
    """The model's transformer at ``path`` as an ONNX graph at ``target`` (exported once:
    an existing graph is kept), inputs ``names``, output the last hidden state."""
    with _locked(target):
        if target.exists():
            return target
        import torch
        from sentence_transformers import SentenceTransformer

        transformer = SentenceTransformer(str(path), device="cpu", local_files_only=True)[0]
        model = transformer.auto_model.eval()

        class Hidden(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, *inputs):
                return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

        sample = transformer.tokenizer(["a text", "another text"], padding=True,
                                       return_tensors="pt")
        axes = {n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]}
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on shapes held constant
            torch.onnx.export(Hidden(), tuple(sample[n] for n in names), str(tmp),
                              input_names=names, output_names=["hidden"], dynamic_axes=axes,
                              opset_version=17, dynamo=False)
        os.replace(tmp, target)
    return target


class OnnxModel:
    """Texts -> float32 vectors with the model at ``path`` on onnxruntime (module docstring)."""

    def __init__(self, path: str, max_length: int, digest: str, cache: Path):
        import onnxruntime
        from transformers import AutoTokenizer

        self.path, self.max_length = Path(path), max_length
        self.pooling, self.normalized = _layout(self.path)
        config = json.loads((self.path / "config.json").read_text())
        check_max_length(path, max_length, config.get("max_position_embeddings"))
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self.names = list(self.tokenizer.model_input_names)
        graph = export(self.path, cache / "onnx" / f"{digest[:24]}.onnx", self.names)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = len(os.sched_getaffinity(0))
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(graph), options,
                                                    providers=["CPUExecutionProvider"])
        self.dim = int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: list[str], batch_size: int, normalize: bool) -> np.ndarray:
        """(len(texts), dim) vectors, batch by batch in the order given; unit rows where
        ``normalize`` or the model normalises."""
        out = np.zeros((len(texts), self.dim), np.float32)
        for first in range(0, len(texts), batch_size):
            batch = [t.strip() for t in texts[first:first + batch_size]]
            tokens = self.tokenizer(batch, padding=True, truncation="longest_first",
                                    max_length=self.max_length, return_tensors="np")
            hidden = self.session.run(None, {n: tokens[n].astype(np.int64)
                                             for n in self.names})[0]
            if self.pooling == "cls":
                vectors = hidden[:, 0]
            else:
                mask = tokens["attention_mask"][..., None].astype(np.float32)
                vectors = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
            if normalize or self.normalized:
                norms = np.linalg.norm(vectors, axis=1, keepdims=True)
                vectors = vectors / np.where(norms > 0, norms, 1.0)
            out[first:first + len(batch)] = vectors
        return out
