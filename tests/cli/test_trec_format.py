"""``releval metrics --format trec`` prints trec_eval's output line for line.

The oracle is trec_eval's own C code through pytrec_eval (trec_eval 9.0.8): its per-query
values, aggregated and printed here by trec_eval's rules (written out below from its source,
independently of ``releval.metrics.trec_eval``): the mean over the evaluated queries, the
num_* measures summed, gm_map exp(mean of log(max(AP, 1e-5))); -c divides by the number of
qrels queries (a missing query adds 0, to gm_map log 1e-5) and counts num_rel as every qrels
judgment with grade > 0; -M keeps each query's first N documents in trec_eval's order
(score descending, docno descending); lines in trec_eval's measure table order, cutoffs
ascending, per-query lines (qid in byte order) before the ``all`` lines.
"""

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from typer.testing import CliRunner

from releval.cli import app

CRANFIELD = Path(__file__).resolve().parents[3] / "shared" / "data" / "cranfield"
# trec_eval's measure table (measures.c), the measures releval shares with it, in its order
TABLE = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
         "iprec_at_recall", "P", "recall", "ndcg", "ndcg_cut", "map_cut", "success"]
COUNTS = {"num_ret", "num_rel", "num_rel_ret"}
runner = CliRunner()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Cranfield's graded qrels plus a query judged only non-relevant ("900"), and two runs
    perturbed from them with fixed seeds: 150 of the 226 qrels queries, "900", and a query the
    qrels do not know ("999"); random scores with ties, some relevant documents planted."""
    if not CRANFIELD.exists():
        pytest.fail(f"shared test data missing: {CRANFIELD}")
    tmp = tmp_path_factory.mktemp("trec")
    qrels = pd.read_csv(CRANFIELD / "qrels" / "test.tsv", sep="\t", dtype=str)
    qrels.columns = ["query_id", "doc_id", "grade"]
    qrels = pd.concat([qrels, pd.DataFrame({"query_id": "900", "doc_id": ["12", "13"],
                                            "grade": "0"})], ignore_index=True)
    (tmp / "qrels.txt").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g
                                           in qrels.itertuples(index=False)))
    relevant = qrels[qrels.grade.astype(int) > 0].groupby("query_id").doc_id.agg(list)
    runs = []
    for seed in (1, 2):
        rng = np.random.default_rng(seed)
        queries = [*sorted(qrels.query_id.unique(), key=int)[seed:seed + 150], "900", "999"]
        lines = []
        for q in queries:
            planted = relevant.get(q, [])[: rng.integers(0, 6)]
            docs = dict.fromkeys([*planted, *map(str, rng.choice(np.arange(1, 1401), 80,
                                                                 replace=False))])
            scores = rng.integers(0, 40, len(docs)) / 4
            lines += [f"{q} Q0 {d} 0 {s} run{seed}\n" for d, s in zip(docs, scores,
                                                                      strict=True)]
        (tmp / f"run{seed}.txt").write_text("".join(lines))
        runs.append(tmp / f"run{seed}.txt")
    return tmp / "qrels.txt", runs


def read(qrels: Path, run: Path):
    qd, rd = {}, {}
    for line in qrels.read_text().splitlines():
        q, _, d, g = line.split()
        qd.setdefault(q, {})[d] = int(g)
    for line in run.read_text().splitlines():
        q, _, d, _, s, tag = line.split()
        rd.setdefault(q, {})[d] = float(s)
    return qd, rd, tag


def cut(rd: dict, depth: int | None) -> dict:
    """Each query's first ``depth`` documents in trec_eval's order."""
    if depth is None:
        return rd
    return {q: dict(sorted(docs.items(), key=lambda x: (x[1], x[0]), reverse=True)[:depth])
            for q, docs in rd.items()}


def place(name: str) -> tuple:
    base, _, param = name.rpartition("_")
    if base and param.replace(".", "").isdigit():
        return TABLE.index(base), float(param)
    return TABLE.index(name), 0.0


def expected(qrels: Path, run: Path, *, c=False, M=None, J=False, level=1, q=False) -> str:
    qd, rd, tag = read(qrels, run)
    per_query = pytrec_eval.RelevanceEvaluator(
        qd, set(TABLE), relevance_level=level, judged_docs_only_flag=int(J)).evaluate(cut(rd, M))
    names = sorted(next(iter(per_query.values())), key=place)
    # trec_eval prints nan for iprec_at_recall_0.00 of a -J ranking with no judged document
    # (0/0); releval prints 0 there
    values = {n: np.nan_to_num([per_query[qid][n] for qid in per_query]) for n in names}
    n = len(qd) if c else len(per_query)
    out = []
    if q:
        for qid in sorted(per_query):
            out += [f"{name:<22}\t{qid}\t" + (f"{int(per_query[qid][name])}" if name in COUNTS
                                             else f"{np.nan_to_num(per_query[qid][name]):6.4f}")
                    for name in names if name != "gm_map"]
    out += [f"{'runid':<22}\tall\t{tag}", f"{'num_q':<22}\tall\t{n}"]
    for name in names:
        v = values[name]
        if name == "num_rel" and c:
            total = sum(g > 0 for judged in qd.values() for g in judged.values())
        elif name in COUNTS:
            total = v.sum()
        elif name == "gm_map":  # pytrec_eval's per-query gm_map is log(max(AP, 1e-5))
            total = math.exp((v.sum() + (n - len(v)) * math.log(1e-5)) / n)
        else:
            total = v.sum() / n
        out.append(f"{name:<22}\tall\t" + (f"{int(total)}" if name in COUNTS
                                           else f"{total:6.4f}"))
    return "\n".join(out) + "\n"


def releval_trec(qrels: Path, run: Path, *flags) -> str:
    result = runner.invoke(app, ["metrics", str(qrels), str(run), "-m", "all_trec",
                                 "--max-grade", "4", "--format", "trec", *map(str, flags)])
    assert result.exit_code == 0, result.output
    return result.stdout


FLAGS = [(), ("-c",), ("-M", 20), ("-J",), ("-l", 2), ("-c", "-M", 10, "-J", "-l", 3)]


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: " ".join(map(str, f)) or "default")
def test_every_shared_measure_equals_trec_eval_line_for_line(files, flags):
    qrels, runs = files
    options = dict(zip(flags, flags[1:], strict=False))  # a flag -> the item after it
    kw = {"c": "-c" in flags, "J": "-J" in flags,
          "M": options.get("-M"), "level": options.get("-l", 1)}
    for run in runs:
        assert releval_trec(qrels, run, *flags) == expected(qrels, run, **kw), run.name


def test_per_query_lines_equal_trec_eval_q(files):
    qrels, runs = files
    assert releval_trec(qrels, runs[0], "-q", "-c") == expected(qrels, runs[0], c=True, q=True)


def test_the_default_is_trec_eval_official_and_a_named_measure_prints_alone(files):
    qrels, runs = files
    default = runner.invoke(app, ["metrics", str(qrels), str(runs[0]), "--max-grade", "4",
                                  "--format", "trec"]).stdout.splitlines()
    assert [line.split("\t")[0].strip() for line in default][:7] == [
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map"]
    assert default[-1].startswith("P_1000")
    alone = runner.invoke(app, ["metrics", str(qrels), str(runs[0]), "-m", "nDCG@10", "-m",
                                "P.10,5", "--max-grade", "4", "--format", "trec"])
    assert [line.split("\t")[0].strip() for line in alone.stdout.splitlines()] == [
        "P_5", "P_10", "ndcg_cut_10"]


def test_undefined_aware_leaves_the_query_without_a_relevant_judgment_out(files):
    qrels, runs = files
    trec = releval_trec(qrels, runs[0], "-m", "num_q")
    aware = releval_trec(qrels, runs[0], "-m", "num_q", "--undefined-aware")
    qd, rd, _ = read(qrels, runs[0])
    evaluated = [q for q in rd if q in qd]
    ap = pytrec_eval.RelevanceEvaluator(qd, {"map"}).evaluate(rd)
    defined = [ap[q]["map"] for q in evaluated if max(qd[q].values()) > 0]
    assert len(defined) == len(evaluated) - 1  # "900" has no relevant judgment
    assert f"map                   \tall\t{sum(defined) / len(evaluated):6.4f}" in trec
    assert f"map                   \tall\t{sum(defined) / len(defined):6.4f}" in aware
    assert f"num_q                 \tall\t{len(evaluated)}" in trec and \
        f"num_q                 \tall\t{len(evaluated)}" in aware


def test_a_measure_trec_eval_lacks_is_refused_in_its_format(files):
    qrels, runs = files
    result = runner.invoke(app, ["metrics", str(qrels), str(runs[0]), "-m", "Judged@10",
                                 "--format", "trec"])
    assert result.exit_code == 2 and "Judged@10 has no trec_eval name" in result.stderr


@pytest.mark.parametrize(("typo", "meant"), [("ndgc_cut.10", "ndcg_cut.10"),
                                             ("nDGC@10", "nDCG@10"), ("gmmap", "gm_map"),
                                             ("all_trek", "all_trec")])
def test_a_misspelt_measure_gets_one_line_with_the_closest_name(files, typo, meant):
    qrels, runs = files
    result = runner.invoke(app, ["metrics", str(qrels), str(runs[0]), "-m", typo])
    assert result.exit_code == 2
    assert result.stderr.strip().endswith(f"did you mean {meant}?")
    assert len(result.stderr.strip().splitlines()) == 1


def test_level_zero_counts_every_judged_document_relevant_as_trec_eval_l0(files, tmp_path):
    """``-l 0`` (trec_eval 9.0.8 accepts ``-l0``): a document judged 0 counts as relevant.
    pytrec_eval refuses level 0, so the oracle is level 1 on the grades shifted by one
    (g + 1 ≥ 1 ⟺ g ≥ 0), exact for every measure that reads relevance, not gains."""
    qrels, runs = files
    shifted = tmp_path / "shifted.txt"
    shifted.write_text("".join(f"{q} 0 {d} {int(g) + 1}\n" for q, _, d, g in
                               map(str.split, qrels.read_text().splitlines())))
    binary = ["num_rel", "num_rel_ret", "map", "Rprec", "bpref", "recip_rank", "P_10",
              "recall_100"]
    qd, rd, _ = read(shifted, runs[0])
    per_query = pytrec_eval.RelevanceEvaluator(qd, set(binary)).evaluate(rd)
    result = runner.invoke(app, ["metrics", str(qrels), str(runs[0]), "-l", "0", "--max-grade",
                                 "4", "--format", "trec", *[a for m in binary for a in ("-m", m)]])
    assert result.exit_code == 0, result.output
    fields = [line.split("\t") for line in result.stdout.splitlines()]
    got = {f[0].strip(): float(f[2]) for f in fields if f[0].strip() in binary}
    for name in binary:
        values = [per_query[q][name] for q in per_query]
        want = sum(values) if name.startswith("num_") else sum(values) / len(values)
        assert got[name] == pytest.approx(want, abs=5e-5), name
