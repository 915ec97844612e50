"""releval's recommendation measures against recommenders 1.2.1 and rectools 0.19, on the
same frames, in a separate virtual environment.

The frames come from the online-retail log (../shared/data/online-retail, its first
``--rows`` lines): users at the cut ``--cut``, their label-1 items in the next 30 days as
positives (less what they bought before: exclude_seen), the catalogue visible at the cut
(items first seen before it) and two systems giving every user with a positive exactly
``--k`` unseen items: ``popularity`` (most buyers before the cut) and ``random`` (a seeded
draw per user from 150 items, with a probability per item). Item vectors for ILD are seeded random.

releval scores them here; recommenders' python_evaluation and rectools' metrics score the
same frames (CSV files) in a virtual environment of their own (``--venv``, built on first use
with numpy, scipy, scikit-learn, pandas < 3, then recommenders==1.2.1 and rectools==0.19.0
without their dependencies, plus rectools' small ones), since both need pandas < 3. Prints
one line per comparison: releval's value, the other's, match (|Δ| ≤ 1e-9) or differs, and
why. Not part of ``make test``.
Usage: .venv/bin/python benchmarks/recsys_oracle.py [--venv DIR] [--rows N] [--cut DATE] [--k K]
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.csv as pacsv

from releval.data import contracts as S
from releval.metrics.catalog import Catalog
from releval.metrics.engine import evaluate

RETAIL = Path(__file__).resolve().parents[2] / "shared" / "data" / "online-retail"
HORIZON = pd.Timedelta(days=30)
PACKAGES = (["numpy<2.3", "scipy", "scikit-learn", "pandas<3", "attrs", "typeguard",
             "pydantic", "tqdm"], ["recommenders==1.2.1", "rectools==0.19.0"])
TOLERANCE = 1e-9


def read_log(rows: int) -> pd.DataFrame:
    table = pacsv.read_csv(RETAIL / "interactions.csv", convert_options=pacsv.ConvertOptions(
        column_types={"item_id": "string", "user_id": "string"},
        include_columns=["user_id", "item_id", "timestamp", "label"]))
    log = table.slice(0, rows).to_pandas()
    log[S.TIMESTAMP] = pd.to_datetime(log[S.TIMESTAMP], utc=True)
    return log


def frames(rows: int, cut: pd.Timestamp, k: int, seed: int = 0) -> dict:
    """The log, items, user-queries, positives, train pairs and both systems' runs."""
    rng = np.random.default_rng(seed)
    log = read_log(rows)
    first = log.groupby(S.ITEM_ID)[S.TIMESTAMP].min()
    documents = pd.DataFrame({
        S.DOC_ID: first.index.astype(str), S.TITLE: first.index.astype(str),
        S.TEXT: first.index.astype(str), S.SOURCE_ID: first.index.astype(str),
        S.PUBLISHED_AT: first.to_numpy(), S.STATUS: "published", S.DELETED_AT: pd.NaT,
        S.TENANT: "default", S.ACL: [[] for _ in first]})
    visible = set(first.index[first < cut])
    bought = log[log[S.LABEL] == 1]
    train = bought[bought[S.TIMESTAMP] < cut][[S.USER_ID, S.ITEM_ID]].drop_duplicates()
    later = bought[(bought[S.TIMESTAMP] >= cut) & (bought[S.TIMESTAMP] < cut + HORIZON)
                   & bought[S.ITEM_ID].isin(visible)][[S.USER_ID, S.ITEM_ID]].drop_duplicates()
    later = later.merge(train, how="left", indicator=True)
    later = later[later["_merge"] == "left_only"].drop(columns="_merge")
    users = sorted(set(log.loc[log[S.TIMESTAMP] < cut + HORIZON, S.USER_ID]))
    queries = pd.DataFrame({S.QUERY_ID: [f"{u}@test" for u in users], S.ISSUED_AT: cut,
                            S.USER_ID: users})
    judged = sorted(set(later[S.USER_ID]))
    popular = train.groupby(S.ITEM_ID)[S.USER_ID].nunique().sort_index()
    popular = popular.sort_values(ascending=False, kind="stable")
    pool = rng.choice(sorted(visible), size=150, replace=False)
    runs = {"popularity": top_unseen(judged, popular.index[:300].tolist(), train, k),
            "random": top_unseen(judged, list(pool), train, k,
                                 rng.random(len(judged) * len(pool)))}
    draw = rng.random(len(runs["random"]))
    runs["random"][S.PROBABILITY] = np.round(0.02 + 0.2 * draw ** 3, 4)
    qrels = pd.DataFrame({S.QUERY_ID: later[S.USER_ID] + "@test", S.DOC_ID: later[S.ITEM_ID],
                          S.GRADE: 1})
    vectors = rng.normal(size=(len(documents), 8))
    return {"log": log, "documents": documents, "queries": queries, "qrels": qrels,
            "train": train, "runs": runs, "vectors": vectors, "judged": judged}


def top_unseen(users: list[str], ranked: list[str], train: pd.DataFrame, k: int,
               order: np.ndarray | None = None):
    """Each user's first ``k`` items of ``ranked`` (or, with ``order``, one key per (user,
    item) pair, of the items by key) that the user did not buy before."""
    grid = pd.DataFrame({S.USER_ID: np.repeat(users, len(ranked)),
                         S.ITEM_ID: np.tile(ranked, len(users)),
                         "order": np.tile(np.arange(len(ranked)), len(users))
                         if order is None else order})
    grid = grid.merge(train, how="left", indicator=True)
    grid = grid[grid["_merge"] == "left_only"].sort_values([S.USER_ID, "order"])
    grid = grid.groupby(S.USER_ID).head(k)
    rank = grid.groupby(S.USER_ID).cumcount() + 1
    return pd.DataFrame({S.SYSTEM: "s", S.ROUTE: "s", S.QUERY_ID: grid[S.USER_ID] + "@test",
                         S.DOC_ID: grid[S.ITEM_ID], S.RANK: rank, S.SCORE: 1.0 / rank})


def releval_side(f: dict, k: int) -> tuple[dict, Catalog]:
    """Per system: each measure's unrounded value, and its per-user values."""
    catalog = Catalog.of(f["log"], f["documents"], f["queries"], embeddings=f["vectors"],
                         expected=f["runs"]["popularity"])
    measures = [f"P@{k}", f"R@{k}", f"nDCG@{k}", f"AP@{k}", f"Coverage@{k}", f"Entropy@{k}",
                f"Novelty@{k}", f"ILD@{k}", f"ILD(space='cooccurrence')@{k}",
                f"Serendipity@{k}", "LogLoss", "GAUC", "AUC"]
    scored = {}
    for system, run in f["runs"].items():
        result = evaluate(run, f["qrels"], measures, queries=f["queries"][S.QUERY_ID],
                          catalog=catalog)
        scored[system] = (result.summary.set_index(S.MEASURE)[S.VALUE].to_dict(),
                          result.per_query)
    return scored, catalog


def export(f: dict, catalog: Catalog, work: Path, k: int) -> None:
    """The frames as CSV files for the oracle program."""
    positive = f["qrels"].assign(user_id=f["qrels"][S.QUERY_ID].str.removesuffix("@test"))
    f["train"].to_csv(work / "train.csv", index=False)
    pd.DataFrame({S.USER_ID: positive[S.USER_ID], S.ITEM_ID: positive[S.DOC_ID],
                  "rating": 1}).to_csv(work / "truth.csv", index=False)
    pd.Series(catalog.items[catalog.visible[0]], name=S.ITEM_ID).to_csv(
        work / "catalog.csv", index=False)
    features = pd.DataFrame(f["vectors"], columns=[f"f{j}" for j in range(8)])
    features.insert(0, S.ITEM_ID, f["documents"][S.DOC_ID].to_numpy())
    features.to_csv(work / "features.csv", index=False)
    keys = set(zip(f["qrels"][S.QUERY_ID], f["qrels"][S.DOC_ID], strict=True))
    for system, run in f["runs"].items():
        out = pd.DataFrame({S.USER_ID: run[S.QUERY_ID].str.removesuffix("@test"),
                            S.ITEM_ID: run[S.DOC_ID], S.RANK: run[S.RANK],
                            "prediction": k + 1 - run[S.RANK]})
        out["relevance"] = [float(p in keys) for p in zip(run[S.QUERY_ID], run[S.DOC_ID],
                                                           strict=True)]
        if S.PROBABILITY in run:
            out[S.PROBABILITY] = run[S.PROBABILITY].to_numpy()
        out.to_csv(work / f"reco_{system}.csv", index=False)
    (work / "systems.json").write_text(json.dumps(list(f["runs"])))


ORACLE = r'''
import json, sys, warnings
import numpy as np, pandas as pd
from recommenders.evaluation import python_evaluation as pe
import rectools.metrics as rm
from rectools import Columns

warnings.filterwarnings("ignore")
work, k = sys.argv[1], int(sys.argv[2])
ids = {"user_id": str, "item_id": str}
train = pd.read_csv(f"{work}/train.csv", dtype=ids)
truth = pd.read_csv(f"{work}/truth.csv", dtype=ids)
catalog = pd.read_csv(f"{work}/catalog.csv", dtype=ids)["item_id"].tolist()
features = pd.read_csv(f"{work}/features.csv", dtype=ids)
col = dict(col_user="user_id", col_item="item_id")
rank_kw = dict(col, col_rating="rating", col_prediction="prediction", k=k)
out = {}
for system in json.load(open(f"{work}/systems.json")):
    reco = pd.read_csv(f"{work}/reco_{system}.csv", dtype=ids)
    top = reco[["user_id", "item_id"]]
    vec = features[features["item_id"].isin(top["item_id"])]
    feat = pd.DataFrame({"item_id": vec["item_id"].to_numpy(),
                         "features": list(vec.drop(columns="item_id").to_numpy())})
    scored = reco[["user_id", "item_id", "prediction"]]
    r = {"precision_at_k": pe.precision_at_k(truth, scored, **rank_kw),
         "recall_at_k": pe.recall_at_k(truth, scored, **rank_kw),
         "ndcg_at_k": pe.ndcg_at_k(truth, scored, discfun_type="log2", **rank_kw),
         "map": pe.map(truth, scored, **rank_kw),
         "map_at_k": pe.map_at_k(truth, scored, **rank_kw),
         "catalog_coverage": pe.catalog_coverage(train, top, **col),
         "distributional_coverage": pe.distributional_coverage(train, top, **col),
         "novelty": pe.novelty(train, top, **col),
         "diversity_cooccurrence": pe.diversity(train, top, **col),
         "diversity_feature": pe.diversity(train, top, item_feature_df=feat,
                                           item_sim_measure="item_feature_vector", **col),
         "serendipity_cooccurrence": pe.serendipity(train, reco[["user_id", "item_id",
                                                                 "relevance"]],
                                                    col_relevance="relevance", **col)}
    if "probability" in reco:
        rated = reco.drop(columns="prediction").rename(
            columns={"relevance": "rating", "probability": "prediction"})
        pred = rated[["user_id", "item_id", "prediction"]]
        r["logloss"] = pe.logloss(rated[["user_id", "item_id", "rating"]], pred, **col,
                                  col_rating="rating", col_prediction="prediction")
        r["auc_pooled"] = pe.auc(rated[["user_id", "item_id", "rating"]], pred, **col,
                                 col_rating="rating", col_prediction="prediction")
    users = pd.Index(sorted(set(truth["user_id"]) | set(train["user_id"])))
    items = pd.Index(sorted(set(train["item_id"]) | set(truth["item_id"]) | set(reco["item_id"])
                            | set(catalog)))

    def codes(frame):
        return pd.DataFrame({Columns.User: users.get_indexer(frame["user_id"]),
                             Columns.Item: items.get_indexer(frame["item_id"])})

    rt_reco = codes(reco).assign(**{Columns.Rank: reco["rank"].to_numpy()})
    rt_truth, rt_prev, rt_catalog = codes(truth), codes(train), items.get_indexer(catalog)
    r["rectools_miuf"] = rm.MeanInvUserFreq(k).calc(rt_reco, rt_prev)
    r["rectools_coverage"] = rm.CatalogCoverage(k, normalize=True).calc(rt_reco, rt_catalog)
    r["rectools_serendipity"] = rm.Serendipity(k).calc(rt_reco, rt_truth, rt_prev, rt_catalog)
    window = reco.groupby("user_id")["relevance"].agg(["size", "sum"])
    window_negatives = window["size"] - window["sum"]
    pauc = {}
    for negatives in range(k - 3, k + 1):  # equal to the user AUC where n− = negatives
        per = rm.PartialAUC(negatives).calc_per_user(rt_reco, rt_truth)
        per.index = users[per.index]
        mine = window_negatives.index[window_negatives == negatives]
        pauc.update(per.reindex(mine).dropna().to_dict())
    r["rectools_pauc"] = pauc
    out[system] = r
print(json.dumps(out))
'''


def oracle_python(venv: Path) -> Path:
    """The oracle environment's python, built on first use."""
    python = venv / "bin" / "python"
    done = venv / ".releval-oracle"
    if not done.exists():
        print(f"building the oracle environment in {venv} (once)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        subprocess.run([*pip, *PACKAGES[0]], check=True)
        subprocess.run([*pip, "--no-deps", *PACKAGES[1]], check=True)
        done.write_text("\n".join([*PACKAGES[0], *PACKAGES[1]]) + "\n")
    return python


def line(name: str, ours: float, theirs: float, source: str, why_differs: str) -> str:
    same = math.isclose(ours, theirs, rel_tol=TOLERANCE, abs_tol=TOLERANCE)
    verdict = "match" if same else f"differs: {why_differs}"
    return f"  {name:<30} {ours:>10.6f} {theirs:>10.6f}  {source:<40} {verdict}"


def report(scored, theirs: dict, f: dict, catalog: Catalog, k: int) -> None:
    train = f["train"]
    n_buyers = train[S.USER_ID].nunique()
    offset = math.log2(len(train) / n_buyers)
    big = (f["qrels"].groupby(S.QUERY_ID).size() > k).sum()
    n_catalogue, n_train_items = int(catalog.visible[0].sum()), train[S.ITEM_ID].nunique()
    print(f"{len(f['judged'])} users with a positive, {len(train)} train pairs, "
          f"{n_catalogue} catalogue items at the cut, k = {k}")
    print(f"  {'measure':<30} {'releval':>10} {'other':>10}  {'other function':<40} verdict")
    for system, r in theirs.items():
        ours, per_query = scored[system]
        print(system)
        rows = [
            (f"P@{k}", ours[f"P@{k}"], r["precision_at_k"], "recommenders precision_at_k", ""),
            (f"R@{k}", ours[f"R@{k}"], r["recall_at_k"], "recommenders recall_at_k", ""),
            (f"nDCG@{k}", ours[f"nDCG@{k}"], r["ndcg_at_k"], "recommenders ndcg_at_k (log2)",
             ""),
            (f"AP@{k} (MAP@{k})", ours[f"AP@{k}"], r["map"], "recommenders map", ""),
            (f"AP@{k} (MAP@{k})", ours[f"AP@{k}"], r["map_at_k"], "recommenders map_at_k",
             f"it divides by min(|R|, k); {big} users have |R| > {k}"),
            (f"Coverage@{k}", ours[f"Coverage@{k}"], r["catalog_coverage"],
             "recommenders catalog_coverage",
             f"it divides by the {n_train_items} train items, releval by the {n_catalogue} "
             f"catalogue items (× each: {ours[f'Coverage@{k}'] * n_catalogue:.0f} vs "
             f"{r['catalog_coverage'] * n_train_items:.0f} items shown)"),
            (f"Coverage@{k}", ours[f"Coverage@{k}"], r["rectools_coverage"],
             "rectools CatalogCoverage(normalize)", ""),
            (f"Entropy@{k}", ours[f"Entropy@{k}"], r["distributional_coverage"],
             "recommenders distributional_coverage", ""),
            (f"Novelty@{k}", ours[f"Novelty@{k}"], r["rectools_miuf"],
             "rectools MeanInvUserFreq", ""),
            (f"Novelty@{k}", ours[f"Novelty@{k}"], r["novelty"], "recommenders novelty",
             f"p(i) = |U_i| / Σ|U_j| there, |U_i| / |U| here: offset log2(pairs / users) = "
             f"{offset:.6f}, releval + offset = {ours[f'Novelty@{k}'] + offset:.6f}"),
            (f"ILD@{k}", ours[f"ILD@{k}"], r["diversity_feature"],
             "recommenders diversity (item_feature_vector)", ""),
            (f"ILD(space='cooccurrence')@{k}", ours[f"ILD(space='cooccurrence')@{k}"],
             r["diversity_cooccurrence"], "recommenders diversity (cooccurrence)", ""),
            (f"Serendipity@{k}", ours[f"Serendipity@{k}"], r["serendipity_cooccurrence"],
             "recommenders serendipity (cooccurrence)",
             "there: mean (1 − similarity to the user's history) × relevance; here: relevant "
             "and not in the popularity system's top k, / k"),
            (f"Serendipity@{k}", ours[f"Serendipity@{k}"], r["rectools_serendipity"],
             "rectools Serendipity",
             "there: max(rank score − popularity-rank score, 0) × relevance, / k"),
        ]
        if "logloss" in r:
            rows += [("LogLoss", ours["LogLoss"], r["logloss"], "recommenders logloss", ""),
                     ("GAUC", ours["GAUC"], r["auc_pooled"], "recommenders auc (pooled)",
                      "one ROC over all pairs there; per-user AUC weighted by |R_u| here")]
        for row in rows:
            print(line(*row))
        auc = per_query[per_query[S.MEASURE] == "AUC"]
        auc = auc.assign(user=auc[S.QUERY_ID].str.removesuffix("@test")).set_index("user")
        pauc = pd.Series(r["rectools_pauc"], dtype=float)
        mine = auc.loc[pauc.index, S.VALUE].to_numpy(float)
        gap = float(np.nanmax(np.abs(mine - pauc.to_numpy()))) if len(pauc) else 0.0
        verdict = "match" if gap <= TOLERANCE else f"differs (max |Δ| {gap:.3g})"
        print(f"  {'AUC per user':<30} {len(pauc):>10} users  rectools PartialAUC(n−) where "
              f"the window holds n− negatives: {verdict}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", type=Path,
                    default=Path(tempfile.gettempdir()) / "releval-recsys-oracle")
    ap.add_argument("--rows", type=int, default=120_000)
    ap.add_argument("--cut", default="2011-03-01")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    f = frames(args.rows, pd.Timestamp(args.cut, tz="UTC"), args.k)
    scored, catalog = releval_side(f, args.k)
    python = oracle_python(args.venv)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        export(f, catalog, work, args.k)
        (work / "oracle.py").write_text(ORACLE)
        done = subprocess.run([str(python), str(work / "oracle.py"), str(work), str(args.k)],
                              capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the oracle program failed:\n{done.stderr}")
    report(scored, json.loads(done.stdout), f, catalog, args.k)


if __name__ == "__main__":
    main()
