"""The compiled checks (``flows.validation``) decide as Great Expectations does
(``flows.validation_gx``): the same report, failed expectations, unexpected counts, examples
and errors, on every suite's good frames and on frames broken against each expectation; and
the flow's validation never imports GX."""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

from flows import validation, validation_gx
from flows.expectations import CHECKS, evaluate
from flows.validation import HELPERS, SUITES
from tests.dag import ROOT
from tests.flows.test_validation import BAD, GOOD, probability_run

PARAMS = {"qrels": [{}, {"max_grade": 4}, {"min_grade": -1, "max_grade": 1},
                    {"min_grade": 4, "max_grade": 3}],
          "automatic_labels": [{}, {"max_grade": 1}]}


def _at(frame: pd.DataFrame, column: str, row: int, value) -> pd.DataFrame:
    """``frame`` with ``value`` in one cell (the column made object when its dtype refuses)."""
    frame = frame.copy()
    try:
        frame.loc[row, column] = value
    except (TypeError, ValueError):
        frame[column] = frame[column].astype(object)
        frame.loc[row, column] = value
    return frame


def _null(frame, columns, rows=(0,)):
    return frame.assign(**{c: frame[c].where(~frame.index.isin(rows)) for c in columns})


def _duplicated(frame, columns):
    frame = frame.copy()
    frame.loc[1, columns] = frame.loc[0, columns].to_numpy()
    return frame


def _text(frame, column):
    return frame.assign(**{column: frame[column].astype(str)})


def _off_range(frame, kwargs):
    low = kwargs.get("min_value")
    return _at(frame, kwargs["column"], 0, low - 1 if low is not None
               else kwargs["max_value"] + 0.5)


BREAK = {  # expectation type -> ways to break a frame against it (kwargs: the expectation's)
    "expect_column_to_exist": [lambda f, k: f.drop(columns=[k["column"]])],
    "expect_column_values_to_not_be_null": [lambda f, k: _null(f, [k["column"]])],
    "expect_column_values_to_be_unique": [lambda f, k: _duplicated(f, [k["column"]])],
    "expect_compound_columns_to_be_unique": [
        lambda f, k: _duplicated(f, k["column_list"]),
        lambda f, k: _null(_duplicated(f, k["column_list"]), k["column_list"][:1], (0, 1)),
        lambda f, k: _null(_duplicated(f, k["column_list"]), k["column_list"], (0, 1)),
        lambda f, k: f.drop(columns=k["column_list"][1:])],
    "expect_column_values_to_be_between": [
        _off_range, lambda f, k: _text(f, k["column"]),
        lambda f, k: _at(f, k["column"], 1, "7")],
    "expect_column_values_to_be_in_set": [
        lambda f, k: _at(f, k["column"], 0, "not-in-set"),
        lambda f, k: _at(f, k["column"], 1, 1)],
    "expect_column_pair_values_a_to_be_greater_than_b": [
        lambda f, k: _at(f, k["column_A"], 0, f.loc[0, k["column_B"]]),
        lambda f, k: _null(f, [k["column_A"]]),
        lambda f, k: _null(f, [k["column_A"], k["column_B"]]),
        lambda f, k: _text(f, k["column_A"]),
        lambda f, k: f.drop(columns=[k["column_B"]])],
}
WHOLE = [  # ways to break any frame
    lambda f: pd.concat([f, f.iloc[[0]]]),  # a repeated row, a repeated index label
    lambda f: f.iloc[:0],
    lambda f: f.iloc[::-1].set_index(f.index.astype(str) + "x"),
]


def frames(name: str):
    """(label, params, frame): the good frame and each broken one."""
    good = GOOD[name]()
    for params in PARAMS.get(name, [{}]):
        yield "good", params, good
    yield from ((f"BAD {i}", p, bad(GOOD[name]()))
                for i, (n, bad, p, *_) in enumerate(BAD) if n == name)
    yield from ((f"whole {i}", {}, bad(good)) for i, bad in enumerate(WHOLE))
    done = set()  # each expectation's first way; the other ways on a suite's first of a type
    for e in validation.suite(name).expectations:
        if set(validation.columns(e.kwargs)) & set(HELPERS):
            continue  # a helper is broken through its inputs (BAD, test_validation)
        for i, bad in enumerate(BREAK[e.type]):
            if i == 0 or (e.type, i) not in done:
                done.add((e.type, i))
                yield f"{e.type} {e.kwargs} {i}", {}, bad(good, e.kwargs)


def outcome(validate, name, frame, params):
    try:
        return validate(name, frame.copy(), **params).to_dict()
    except Exception as exc:  # a helper that cannot read the frame raises the same either way
        return f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("name", sorted(SUITES))
def test_the_compiled_checks_report_as_gx_does(name):
    differing = {}
    for label, params, frame in frames(name):
        gx = outcome(validation_gx.validate, name, frame, params)
        ours = outcome(validation.validate, name, frame, params)
        if ours != gx:
            differing[label] = {"gx": gx, "compiled": ours}
    assert differing == {}, json.dumps(differing, indent=1, default=str)[:4000]


def test_every_expectation_type_breaks_and_is_compiled():
    used = {e.type for name in SUITES for e in validation.suite(name).expectations}
    assert used == set(BREAK) == set(CHECKS)


def test_a_run_with_probabilities_reports_as_gx_does():
    for frame in (probability_run(), _at(probability_run(), "probability", 1, 1.2),
                  _null(probability_run(), ["probability"])):
        assert outcome(validation.validate, "run", frame, {}) == outcome(
            validation_gx.validate, "run", frame, {})


def test_gx_builds_every_suite_from_the_same_data():
    for name in SUITES:
        spec, built = validation.suite(name), validation_gx.suite(name)
        assert built.name == spec.name
        assert [e.expectation_type for e in built.expectations] == [
            e.type for e in spec.expectations]


def test_the_flows_validation_never_imports_great_expectations(tmp_path):
    """The flow's validate task, on a passing and a failing output, in a fresh process."""
    script = textwrap.dedent("""
        import json, sys
        import pandas as pd
        from flows.pipeline import validate
        from tests.flows.test_validation import documents
        out = "data/raw/documents.parquet"
        documents().to_parquet(out)
        passed = validate.fn("prepare", [out], {})
        doubled = documents()
        doubled.loc[2, "doc_id"] = "kb-1#0"
        doubled.to_parquet(out)
        failed = validate.fn("prepare", [out], {})
        print(json.dumps([passed, failed, "great_expectations" in sys.modules]))
    """)
    (tmp_path / "data/raw").mkdir(parents=True)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env=os.environ | {"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    passed, failed, imported = json.loads(done.stdout.splitlines()[-1])
    assert passed == [1, None]
    assert failed[0] == 0 and "documents: expect_column_values_to_be_unique failed on " \
        "doc_id: 2 unexpected, e.g. rows 0, 2 ('kb-1#0')" in failed[1]
    assert not imported
    report = json.loads((tmp_path / "data/validation/prepare/documents.documents.json")
                        .read_text())
    assert report["success"] is False and report["failures"][0]["unexpected_count"] == 2


def test_an_unknown_keyword_is_the_suites_error_not_the_frames():
    frame = GOOD["split"]()
    with pytest.raises(TypeError):
        evaluate(frame, "expect_column_values_to_be_unique",
                            {"column": "split", "mostly": 0.9})
    assert np.array_equal(evaluate(frame, "expect_column_values_to_be_unique",
                                   {"column": "split"}).unexpected, [False] * 3)


def test_a_column_under_another_case_fails_either_way():
    """The one known difference: GX's map metrics find a column whatever its case, so GX
    reports only the missing column; the compiled checks also report each check of it."""
    frame = GOOD["documents"]().rename(columns={"doc_id": "Doc_ID"})
    ours, gx = (v.validate("documents", frame) for v in (validation, validation_gx))
    assert not ours.success and not gx.success
    assert ours.failures[0] == gx.failures[0] == {
        "expectation": "expect_column_to_exist", "columns": ["doc_id"],
        "unexpected_count": None, "examples": [], "error": None}


def test_the_ledger_keys_follow_the_compiled_checks():
    from releval.project.closure import code_files

    assert {"flows/validation.py", "flows/expectations.py"} <= code_files("flows.validation")
    assert "flows/validation_gx.py" not in code_files("flows.validation")
