"""The demo data and params the self-test checks share: one embedding cache for the session,
so the dense route encodes the demo corpus once."""

import pandas as pd
import pytest

from releval.data import contracts as S
from releval.demo.generator import generate
from releval.params import Params

NO_LOG = pd.DataFrame(columns=list(S.INTERACTION_COLUMNS))


@pytest.fixture(scope="session")
def embeddings(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("embeddings"))


@pytest.fixture(scope="session")
def demo():
    return generate(n_docs=300, n_queries=50, seed=11)


@pytest.fixture(scope="session")
def demo_params(embeddings) -> Params:
    """BM25, exact dense, HNSW dense and a team's run file, fused as the demo fuses them."""
    dense = {"route": "dense", "cache_dir": embeddings, "min_score": 0.3}
    systems = {"bm25": {"route": "bm25", "k1": 1.2}, "dense": dense,
               "ann": dense | {"index": "hnsw"},
               "prod_v2": {"route": "external", "path": "team_run.trec"}}
    return Params.model_validate({"selftest": {"trials": 30, "max_docs": 150},
                                  "candidates": {"systems": systems}})
