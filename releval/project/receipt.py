"""A run's receipt: everything that produced its numbers, by content, in canonical JSON.

The receipt (``reports.receipt`` in ``releval.artifacts``) =
``{"receipt": R, "sha256": sha256(canonical(R)), "run": X}``.
R, the hashed part, is byte-identical for two runs of the same code, inputs and params:
the git commit (and whether the code differed from it, with a digest of that difference),
every stage's input and output digests from dvc.lock, the full params and their digest,
seeds, the tie policy, python's and the key packages' versions, each dense model's digest,
the analyzer, tokenizer and index settings of every route, the metric definitions' digest,
the self-test's outcome (relations, trials reached and passed, each oracle's agreement),
the headline metrics, the over-time figures (per system and measure: mean, CI and the
per-slice table: ``releval.decision.over_time``), the pinned fixture's figures, per system
and evaluated query a digest of its ordered result ids
and scores (no query text), the run's looks (the evaluated set's and the tuning split's
content digests, each with the identity of what was compared on it:
``releval.decision.looks.taken``) and the work done. X holds what a rerun cannot repeat:
when it ran (and, for a scheduled run, its deployment, flow run and window), its headline and
decision, and the digests of the outputs in ``APART`` (measured
latencies; the ingestion counts that depend on judgments carried over from earlier runs),
each with the reason.

Canonical JSON: keys sorted, no insignificant whitespace, UTF-8; floats as Python's repr.

``SCHEMA`` versions R: ``/2`` added ``looks``; a ``/1`` receipt has none and is read as is
(its looks are unknown: ``releval.decision.looks.from_ledger`` counts it as unrecorded).
"""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from fnmatch import fnmatch
from importlib import metadata
from pathlib import Path

import pandas as pd

from releval import artifacts
from releval.data import contracts as S
from releval.errors import InputError, reading
from releval.metrics.measures import MEASURES
from releval.metrics.ranking import TIE_POLICY
from releval.params import Params, holds
from releval.project import template

SCHEMA = "releval.project.receipt/2"
PACKAGES = ("releval", "numpy", "pandas", "pyarrow", "bm25s", "PyStemmer",
            "sentence-transformers", "torch", "faiss-cpu", "scikit-learn", "prefect", "dvc",
            "great-expectations")
# outputs kept apart from the hashed part: a rerun of the same inputs need not repeat them
APART = {a.pattern: a.varies for a in artifacts.CATALOG.values() if a.varies}
# what a rerun of the same code need not match: the lock file and the params (recorded apart)
UNTRACKED_BY_CODE = ("dvc.lock", "params.yaml")


def canonical(doc) -> bytes:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def digest(doc) -> str:
    return hashlib.sha256(canonical(doc)).hexdigest()


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.decode("utf-8", "replace")


def code_state(root: Path) -> dict:
    """Commit, whether tracked or untracked files differ from it (the lock file and params
    aside), and a sha256 over that difference (the diff plus untracked files' content); and
    the releval that ran: its version and the digest of its code (``template``)."""
    ran = {"releval": {"version": template.version(),
                       "sha256": template.code_digests()["code"]}}
    commit = _git(root, "rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "diff_sha256": None} | ran
    excludes = [f":(exclude){p}" for p in UNTRACKED_BY_CODE]
    diff = _git(root, "diff", "HEAD", "--binary", "--", ".", *excludes) or ""
    untracked = sorted((_git(root, "ls-files", "--others", "--exclude-standard", "--", ".",
                             *excludes) or "").split())
    h = hashlib.sha256(diff.encode())
    for name in untracked:
        h.update(f"\0{name}\0".encode() + (root / name).read_bytes())
    dirty = bool(diff or untracked)
    return {"commit": commit.strip(), "dirty": dirty,
            "diff_sha256": h.hexdigest() if dirty else None} | ran


def packages() -> dict[str, str | None]:
    out = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def definitions_digest() -> str:
    """sha256 over every measure family's written definition: changes when one does."""
    return digest({name: family.definition for name, family in sorted(MEASURES.items())})


def lock_digests(lock: dict) -> tuple[dict, dict, dict]:
    """(inputs, outputs, apart) from a parsed dvc.lock: path -> md5. Inputs are the
    ``inputs`` stage's pinned copies and the deps no stage produces (code); outputs every
    other stage's outs except those matching ``APART``. A dep that is a folder of outputs
    (or a part of one) is covered by those outputs and left out."""
    stages = lock.get("stages", {})
    outs = {o["path"]: o.get("md5") for st in stages.values() for o in st.get("outs", [])}
    pinned = {o["path"]: o.get("md5") for o in stages.get("inputs", {}).get("outs", [])}

    def derived(path: str) -> bool:
        return any(path == o or path.startswith(o + "/") or o.startswith(path + "/")
                   for o in outs)

    code = {d["path"]: d.get("md5") for st in stages.values() for d in st.get("deps", [])
            if not derived(d["path"])}
    produced = {p: h for p, h in outs.items() if p not in pinned}
    apart = {p: {"md5": h, "why": next(w for m, w in APART.items() if fnmatch(p, m))}
             for p, h in produced.items() if any(fnmatch(p, m) for m in APART)}
    return (dict(sorted((code | pinned).items())),
            {p: h for p, h in sorted(produced.items()) if p not in apart},
            dict(sorted(apart.items())))


def result_digests(run: pd.DataFrame, queries: pd.Series) -> dict[str, str]:
    """query_id -> sha256 of its ranked list as ``doc_id<TAB>score`` lines in rank order (a
    query with no results: the digest of nothing), for the evaluated ``queries``."""
    run = run[run[S.QUERY_ID].isin(set(queries))].sort_values([S.QUERY_ID, S.RANK],
                                                               kind="stable")
    scores = run[S.SCORE].astype("float64").map(repr).astype(str)
    lines = run[S.DOC_ID].astype(str) + "\t" + scores + "\n"
    text = lines.groupby(run[S.QUERY_ID].to_numpy(), sort=True).sum()
    empty = hashlib.sha256(b"").hexdigest()
    out = {str(q): empty for q in sorted(set(queries))}
    out |= {str(q): hashlib.sha256(t.encode()).hexdigest() for q, t in text.items()}
    return out


def routes(p: Params, models: dict[str, str]) -> dict:
    """Per candidate system: its route and every analyzer, tokenizer and index setting."""
    out = {}
    for name, system in p.candidates.systems.items():
        config = system.model_dump()
        if config["route"] == "dense":
            config["model_digest"] = models.get(name)
        out[name] = config
    return out


def selftest(totals: dict) -> dict:
    """The self-test's outcome from selftest.json: relations, trials, reached, passed,
    failed and not applicable, and per oracle of the differential its version and the cases
    compared and agreeing rows."""
    keys = ("relations", "trials", "reached", "passed", "failed", "not_applicable", "ok")
    return {k: totals.get(k) for k in keys} | {"differential": {
        name: {k: o.get(k) for k in ("version", "cases", "agree", "differ")}
        for name, o in (totals.get("differential") or {}).get("oracles", {}).items()}}


def work(p: Params, summary: dict, qrels: int, slices: dict, comparison: dict,
         validations: int, checked: dict | None = None) -> dict:
    """What the run did, counted (``checked``: the self-test's totals); a kind of work params
    asked for and that ran zero times is an InputError naming it (a run never passes quietly
    on nothing)."""
    paired = comparison.get("paired") or []
    checked = checked or {}
    counts = {"selftest_trials_reached": int(checked.get("reached", 0)),
              "queries_evaluated": int(summary.get("queries", 0)),
              "systems_evaluated": len(summary.get("systems", [])),
              "judgments_used": int(qrels),
              "slices": int(slices.get("slices", 0)),
              "slices_tested": int(slices.get("tested", 0)),
              "comparisons": len(paired),
              "resamples": int(sum(r.get("resamples", 0) for r in paired)),
              "validations_passed": int(validations)}
    asked = {"selftest_trials_reached": f"selftest.trials={p.selftest.trials}",
             "queries_evaluated": f"evaluate.splits={p.evaluate.splits}",
             "systems_evaluated": "candidates.systems",
             "judgments_used": f"judgments.source={p.judgments.source}",
             "validations_passed": "the pipeline's suites"}
    if p.slices.dimensions:
        asked["slices"] = f"slices.dimensions={p.slices.dimensions}"
    if comparison.get("controlled", True):
        asked["resamples"] = f"compare.resamples={p.compare.resamples}"
    for key, why in asked.items():
        if counts[key] == 0:
            raise InputError(f"the run did no work of a kind it was asked for: {key} = 0 "
                             f"(asked by {why})", "receipt")
    return counts


def build(*, p: Params, raw_params: dict, lock: dict, code: dict, metrics: dict,
          results: dict[str, dict[str, str]], models: dict[str, str], work_done: dict,
          ran: dict, checked: dict | None = None, figures: dict | None = None,
          fixture: dict | None = None, looks: list[dict] | None = None) -> dict:
    """The receipt document (see the module docstring)."""
    inputs, outputs, apart = lock_digests(lock)
    receipt = {
        "schema": SCHEMA,
        "code": code,
        "params": {"values": raw_params, "sha256": digest(raw_params)},
        "seeds": {"base.seed": p.base.seed},
        "tie_policy": TIE_POLICY,
        "packages": packages(),
        "routes": routes(p, models),
        "metric_definitions_sha256": definitions_digest(),
        "inputs": inputs,
        "outputs": outputs,
        "selftest": selftest(checked or {}),
        "metrics": metrics,
        "figures": figures,
        "fixture": fixture,
        "results": results,
        "looks": looks or [],
        "work": work_done,
    }
    return {"receipt": receipt, "sha256": digest(receipt), "run": ran | {"apart": apart}}


PARAMS_VALUES = ("receipt", "params", "values")  # kept in the params file's order


def _ordered(doc, path: tuple = ()):
    """``doc`` with every mapping's keys sorted but those of the params' values: their order
    is the params file's (systems are evaluated and written in ``candidates.systems``'
    order), so ``releval reproduce`` writes the params back as they were."""
    if isinstance(doc, dict):
        keep = path[:len(PARAMS_VALUES)] == PARAMS_VALUES
        items = doc.items() if keep else sorted(doc.items())
        return {key: _ordered(value, (*path, key)) for key, value in items}
    if isinstance(doc, list):
        return [_ordered(value, path) for value in doc]
    return doc


def write(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(_ordered(doc), indent=1, ensure_ascii=False) + "\n")


def read(path: Path, needs: tuple[str, ...] = ()) -> dict:
    """A receipt file; InputError when missing, not JSON, its hash does not match, or its
    hashed part lacks a field the caller ``needs`` (dotted, e.g. ``code.commit``): a
    receipt of another schema, named with its schema and every field it lacks."""
    if not path.is_file():
        raise InputError("file not found", str(path))
    with reading(str(path)):
        doc = json.loads(path.read_text())
    if not isinstance(doc, dict) or not {"receipt", "sha256"} <= set(doc):
        raise InputError("not a releval receipt (needs 'receipt' and 'sha256')", str(path))
    if digest(doc["receipt"]) != doc["sha256"]:
        raise InputError("the receipt's content does not match its sha256 (edited?)",
                         str(path))
    lacks = [field for field in needs if not holds(doc["receipt"], field)]
    if lacks:
        schema = doc["receipt"].get("schema") if isinstance(doc["receipt"], dict) else None
        raise InputError(f"a receipt of another schema ({schema or 'none named'}; this "
                         f"releval writes {SCHEMA}): lacks {', '.join(lacks)}", str(path))
    return doc


def describes(doc: dict, root: Path = Path(".")) -> bool:
    """The receipt ``doc`` is of the outputs now in ``root``: every output it digests is
    there with that md5 (a receipt left by an earlier run is not)."""
    outputs = doc.get("receipt", {}).get("outputs") or {}
    for path, md5 in outputs.items():
        file = root / path
        if not file.is_file() or hashlib.md5(file.read_bytes()).hexdigest() != md5:
            return False
    return bool(outputs)


def differences(old: dict, new: dict, limit: int = 10) -> list[str]:
    """What differs between two receipts' hashed parts, most telling first: inputs, code,
    params, packages, metrics (old → new), outputs, per-query results."""
    a, b = old["receipt"], new["receipt"]
    lines = []
    for path in sorted(set(a["inputs"]) | set(b["inputs"])):
        if a["inputs"].get(path) != b["inputs"].get(path):
            lines.append(f"input {path}: {a['inputs'].get(path)} → {b['inputs'].get(path)}")
    for key in ("code", "params", "seeds", "tie_policy", "packages", "routes",
                "metric_definitions_sha256", "selftest", "work", "figures", "fixture",
                "looks"):
        if a.get(key) != b.get(key):
            lines.append(f"{key}: {_brief(a.get(key), b.get(key))}")
    moved = [(s, m, v, b["metrics"].get(s, {}).get(m))
             for s, ms in a["metrics"].items() for m, v in ms.items()
             if b["metrics"].get(s, {}).get(m) != v]
    moved += [(s, m, None, v) for s, ms in b["metrics"].items() for m, v in ms.items()
              if m not in a["metrics"].get(s, {})]
    lines += [f"metric {s} {m}: {_num(v)} → {_num(w)}" for s, m, v, w in moved[:limit]]
    if len(moved) > limit:
        lines.append(f"... and {len(moved) - limit} more metrics")
    outs = [p for p in sorted(set(a["outputs"]) | set(b["outputs"]))
            if a["outputs"].get(p) != b["outputs"].get(p)]
    if outs:
        lines.append(f"outputs ({len(outs)}): " + ", ".join(outs[:limit])
                     + (" ..." if len(outs) > limit else ""))
    queries = [(s, q) for s in sorted(set(a["results"]) | set(b["results"]))
               for q in sorted(set(a["results"].get(s, {})) | set(b["results"].get(s, {})))
               if a["results"].get(s, {}).get(q) != b["results"].get(s, {}).get(q)]
    if queries:
        lines.append(f"ranked lists ({len(queries)} system×query): "
                     + ", ".join(f"{s}/{q}" for s, q in queries[:limit])
                     + (" ..." if len(queries) > limit else ""))
    return lines


def counted(receipt: dict) -> tuple[int, int]:
    """(digests, metrics) a receipt holds: what `reproduce` compares."""
    r = receipt["receipt"]
    digests = len(r["inputs"]) + len(r["outputs"]) + sum(len(q) for q in r["results"].values())
    return digests + 2, sum(len(m) for m in r["metrics"].values())  # + params and definitions


def _num(value) -> str:
    return "absent" if value is None else (f"{value:.6g}" if isinstance(value, float)
                                           else str(value))


def _brief(old, new) -> str:
    if isinstance(old, dict) and isinstance(new, dict):
        keys = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        return "; ".join(f"{k} {_brief(old.get(k), new.get(k))}" for k in keys[:5])
    text = f"{old!r} → {new!r}"
    return text if len(text) < 160 else text[:157] + "..."
