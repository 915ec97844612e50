"""The ledger as a history: the over-time block a new receipt gets against the previous
one, the attribution between the live window and the pinned fixture, and the entries read
back from the ledger's files."""

import pytest

from releval.documents.ledger import Entry, Unreadable
from releval.project import history
from releval.project.receipt import digest, write

FIXTURE = "data/input/fixture"


def _figures(mean: float, slices: dict[str, tuple[float, float]]) -> dict:
    """figures of one system and measure: per slice (weight, mean)."""
    rows = [{"slice": s, "n": int(w), "n_undefined": 0, "weight": w, "mean": m}
            for s, (w, m) in slices.items()]
    return {"dimension": "kind", "alpha": 0.05, "systems": {"hybrid": {"nDCG@10": {
        "mean": mean, "ci_low": mean - 0.05, "ci_high": mean + 0.05, "n": 10,
        "n_undefined": 0, "slices": rows}}}}


def receipt(live: float, fixture: float | None, *, fixture_md5: str = "f1",
            finished: str = "2026-11-30T03:00:00+00:00") -> dict:
    r = {"code": {"commit": "abc", "dirty": False}, "work": {"queries_evaluated": 10},
         "params": {"values": {"compare": {"min_effect": 0.02}}},
         "inputs": {"data/input/prepare": f"p{live}", FIXTURE: fixture_md5},
         "figures": _figures(live, {"a": (5.0, live), "b": (5.0, live)}),
         "fixture": None if fixture is None else {
             "fixture": "fixture.tsv", "not_applicable": {}, "systems": {"hybrid": {
                 "nDCG@10": {"mean": fixture, "ci_low": None, "ci_high": None, "n": 10,
                             "n_undefined": 0}}}}}
    return {"receipt": r, "sha256": digest(r),
            "run": {"finished_at": finished, "headline": {
                "measure": "nDCG@10", "baseline": "bm25", "candidate": "hybrid",
                "systems": {"hybrid": live}, "decision": "PASS", "failed": []}}}


@pytest.mark.parametrize(("live", "fixture", "md5", "verdict", "says"), [
    (0.60, 0.50, "f1", "drift", "drift of the traffic or the corpus"),
    (0.60, 0.45, "f1", "system", "the pinned fixture moved -0.0500"),
    (0.51, 0.50, "f1", "stable", "both within ±0.02"),
    (0.60, None, "f1", "unattributed", "no pinned fixture in both runs"),
    (0.60, 0.50, "f2", "unattributed", "the pinned fixture itself changed"),
])
def test_a_change_is_attributed_to_the_system_only_when_the_fixture_moved(
        live, fixture, md5, verdict, says):
    before, after = receipt(0.50, 0.50), receipt(live, fixture, fixture_md5=md5)
    moved = history.over_time(before, after)
    why = moved["attribution"]["hybrid"]["nDCG@10"]
    assert why["verdict"] == verdict and says in why["why"], why
    assert moved["previous"]["sha256"] == before["sha256"][:12]
    assert moved["controlled"] is False
    assert moved["systems"]["hybrid"]["nDCG@10"]["rate"] == pytest.approx(live - 0.50)


def test_with_no_minimum_effect_an_unchanged_fixture_did_not_move():
    before, after = receipt(0.50, 0.50), receipt(0.60, 0.50)
    after["receipt"]["params"]["values"]["compare"]["min_effect"] = 0.0
    why = history.over_time(before, after)["attribution"]["hybrid"]["nDCG@10"]
    assert why["verdict"] == "drift", why


def test_the_first_run_has_nothing_to_compare_with():
    moved = history.over_time(None, receipt(0.5, 0.5))
    assert moved["comparable"] is False and "first run" in moved["why"]


def test_entries_read_the_ledger_oldest_first_and_flag_an_edited_file(tmp_path):
    first = receipt(0.50, 0.50, finished="2026-11-23T03:00:00+00:00")
    second = receipt(0.60, 0.50)
    second["run"]["over_time"] = history.over_time(first, second)
    write(tmp_path / "20261123T030000Z-a.json", first)
    write(tmp_path / "20261130T030000Z-b.json", second)
    edited = receipt(0.7, 0.5)
    edited["receipt"]["work"]["queries_evaluated"] = 99  # the hash no longer matches
    write(tmp_path / "20261201T030000Z-c.json", edited)
    rows = history.entries(tmp_path)
    assert [r.finished_at for r in rows[:2]] == ["2026-11-23T03:00:00+00:00",
                                                 "2026-11-30T03:00:00+00:00"]
    assert rows[1].over_time.attribution["hybrid"]["nDCG@10"].verdict == "drift"
    assert rows[2] == Unreadable(run=3, file="20261201T030000Z-c.json",
                                 problem=f"{history.SET_ASIDE}: the receipt's content does not "
                                         "match its sha256 (edited?)")
    assert history.previous(tmp_path)["sha256"] == second["sha256"]


def test_an_entry_as_plain_data_is_the_receipts_parts_as_written(tmp_path):
    first = receipt(0.50, 0.50, finished="2026-11-23T03:00:00+00:00")
    second = receipt(0.60, None)
    second["run"]["over_time"] = history.over_time(first, second)
    write(tmp_path / "20261123T030000Z-a.json", first)
    write(tmp_path / "20261130T030000Z-b.json", second)
    rows = history.entries(tmp_path)
    assert all(isinstance(r, Entry) for r in rows)
    plain = rows[1].plain()
    assert list(plain) == list(Entry.model_fields)
    assert (plain["figures"], plain["fixture"]) == (second["receipt"]["figures"], None)
    assert plain["over_time"] == second["run"]["over_time"]
    assert list(plain["over_time"]) == sorted(plain["over_time"])  # as the file keeps it
    assert plain["lineage"] == rows[1].lineage.model_dump()
    assert rows[0].plain()["fixture"] == first["receipt"]["fixture"]


def test_a_receipt_not_of_the_models_shape_is_set_aside_and_not_compared_with(tmp_path):
    ours = receipt(0.50, 0.50, finished="2026-11-23T03:00:00+00:00")
    write(tmp_path / "20261123T030000Z-a.json", ours)
    odd = receipt(0.60, 0.50)
    odd["receipt"]["figures"]["systems"]["hybrid"]["nDCG@10"]["median"] = 0.6  # unknown key
    odd["sha256"] = digest(odd["receipt"])
    write(tmp_path / "20261130T030000Z-b.json", odd)
    rows = history.entries(tmp_path)
    assert isinstance(rows[0], Entry) and isinstance(rows[1], Unreadable)
    assert rows[1].problem.startswith(f"{history.SET_ASIDE}: not a Receipt document: "
                                      "receipt.figures.systems.hybrid.nDCG@10.median")
    assert history.previous(tmp_path)["sha256"] == ours["sha256"]


def test_a_receipt_of_another_schema_is_listed_with_what_it_lacks(tmp_path):
    ours = receipt(0.50, 0.50)
    write(tmp_path / "20261123T030000Z-a.json", ours)
    other = {"schema": "releval.project.receipt/0", "params": {"values": {}}}
    write(tmp_path / "20261130T030000Z-b.json",
          {"receipt": other, "sha256": digest(other), "run": {}})
    rows = history.entries(tmp_path)
    assert rows[0].sha256 == ours["sha256"][:12]
    assert rows[1] == Unreadable(run=2, file="20261130T030000Z-b.json", problem=(
        f"{history.SET_ASIDE}: a receipt of another schema (releval.project.receipt/0; "
        "this releval writes releval.project.receipt/2): lacks code.commit, code.dirty, "
        "work.queries_evaluated, inputs"))
    assert history.previous(tmp_path)["sha256"] == ours["sha256"]  # the newest comparable
