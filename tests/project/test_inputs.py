"""Pinned inputs: copies by content into data/input/<slot>, stale files removed, one-line
errors for a missing input, pipeline outputs read in place."""

import json
import os

import pytest

from releval.errors import InputError
from releval.params import Params
from releval.project.inputs import inputs, pin, pinned


def params(tmp_path, **extra) -> Params:
    raw = {"prepare": {"source": "beir", "path": str(tmp_path / "cacm")},
           "candidates": {"systems": {"bm25": {"route": "bm25"},
                                      "team": {"route": "external",
                                               "path": str(tmp_path / "team.trec")}}},
           "fusion": {"systems": {}}, "compare": {"baseline": "bm25", "candidate": "team"},
           "pool": {"systems": ["bm25"]}}
    for section, values in extra.items():
        raw.setdefault(section, {}).update(values)
    return Params.model_validate(raw)


@pytest.fixture
def sources(tmp_path):
    (tmp_path / "cacm" / "qrels").mkdir(parents=True)
    (tmp_path / "cacm" / "corpus.jsonl").write_text('{"_id": "d1", "text": "x"}\n')
    (tmp_path / "cacm" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq\td1\t1\n")
    (tmp_path / "team.trec").write_text("q Q0 d1 1 2.0 team\n")
    return tmp_path


def test_every_given_input_is_copied_into_its_slot_and_outputs_are_read_in_place(sources):
    p = params(sources)
    out = sources / "input"
    report = pin(p, out)
    assert {r["key"] for r in report} == {"prepare.path", "candidates.systems.team.path"}
    assert (out / "prepare/cacm/qrels/test.tsv").read_text().endswith("q\td1\t1\n")
    assert pinned(p, "prepare.path", out) == out / "prepare" / "cacm"
    assert pinned(p, "candidates.systems.team.path", out) == out / "runs/team/team.trec"
    assert pinned(p, "failures.review", out) is None
    slots = sorted(str(d.relative_to(out)) for d in out.rglob("*") if (d / "pinned.json").exists())
    assert slots == ["adjudicator", "automatic", "fixture", "judgments", "logged", "policy",
                     "prepare", "reference", "review", "runs/bm25",
                     "runs/team"]  # every slot exists, none is empty
    assert json.loads((out / "review/pinned.json").read_text()) == {
        "key": "failures.review", "given": False}


def demo_run(**prepare) -> Params:
    return Params.model_validate({
        "prepare": prepare, "fusion": {"systems": {}},
        "candidates": {"systems": {"bm25": {"route": "bm25"}, "demo_run": {
            "route": "external", "path": "data/raw/external_run.trec"}}},
        "compare": {"baseline": "bm25", "candidate": "demo_run"}})


def test_the_demos_simulated_run_is_read_in_place_and_refused_under_real_data(sources):
    p = demo_run(source="demo")
    assert pin(p, sources / "input") == []
    assert str(pinned(p, "candidates.systems.demo_run.path", sources / "input")) == \
        "data/raw/external_run.trec"  # a pipeline output: DVC pins it already
    with pytest.raises(InputError) as info:
        pin(demo_run(source="beir", path=str(sources / "cacm")), sources / "input")
    assert str(info.value) == (
        "params:candidates.systems.demo_run.path: data/raw/external_run.trec is a "
        "pipeline output that only a generated source (demo | recsys_demo) writes; "
        "prepare.source is beir: give the run's own file")


def test_a_change_in_place_is_copied_and_a_deleted_file_leaves_the_copy(sources):
    p = params(sources)
    out = sources / "input"
    pin(p, out)
    qrels = sources / "cacm/qrels/test.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\n")
    os.utime(qrels, ns=(1, 1))  # even with an older time stamp: the size differs
    (sources / "cacm/corpus.jsonl").unlink()
    report = {r["key"]: r for r in pin(p, out)}
    assert report["prepare.path"] == {"key": "prepare.path", "slot": "prepare", "files": 1,
                                      "copied": 1}
    assert (out / "prepare/cacm/qrels/test.tsv").read_text() == "query-id\tcorpus-id\tscore\n"
    assert not (out / "prepare/cacm/corpus.jsonl").exists()
    assert {r["copied"] for r in pin(p, out)} == {0}  # unchanged files are not copied again


def test_a_missing_input_is_one_line_naming_its_params_key(sources):
    (sources / "team.trec").unlink()
    with pytest.raises(InputError) as info:
        pin(params(sources), sources / "input")
    assert str(info.value).count("\n") == 0
    assert "candidates.systems.team.path" in str(info.value)
    assert "team.trec" in str(info.value)


def test_relative_paths_resolve_from_the_given_base_and_removed_systems_lose_their_slot(
        sources, monkeypatch):
    p = params(sources, prepare={"path": "cacm"})
    out = sources / "input"
    monkeypatch.setenv("RELEVAL_INPUT_BASE", str(sources))
    pin(p, out)
    assert (out / "prepare/cacm/corpus.jsonl").exists()
    (out / "runs/gone").mkdir()
    pin(p, out)
    assert not (out / "runs/gone").exists()


def test_judges_files_and_review_are_inputs_only_when_they_are_used(sources):
    used = params(sources, judgments={"source": "files", "files": str(sources / "labels")},
                  failures={"review": str(sources / "review.csv")})
    keys = {i.key: i.path for i in inputs(used)}
    assert keys["judgments.files"] == str(sources / "labels")
    assert keys["failures.review"] == str(sources / "review.csv")
    assert {i.key: i.path for i in inputs(params(sources))}["judgments.files"] is None


def test_pinned_as_given_sees_a_change_in_place_a_stale_file_and_a_missing_slot(sources):
    """What a run with nothing else to do asks first: would pinning change anything?"""
    from releval.project.inputs import pinned_as_given

    p = params(sources)
    out = sources / "input"
    assert not pinned_as_given(p, out)  # nothing pinned yet
    assert not out.exists()  # asking wrote nothing
    pin(p, out)
    assert pinned_as_given(p, out)
    corpus = sources / "cacm" / "corpus.jsonl"
    corpus.write_text('{"_id": "d1", "text": "changed in place"}\n')
    assert not pinned_as_given(p, out)
    pin(p, out)
    assert pinned_as_given(p, out)
    (out / "prepare" / "cacm" / "stale.txt").write_text("left by an older input\n")
    assert not pinned_as_given(p, out)
    pin(p, out)
    (out / "review" / "pinned.json").unlink()
    assert not pinned_as_given(p, out)
