"""reports/summary.md of a recommendation evaluation: the protocol, the measures in their
groups with n and undefined (n/a where a measure does not apply), and the random split; and
the history part from the run ledger."""

from releval.decision.over_time import NOTE
from releval.documents.summary import Recommendation
from releval.report.recommendation import group, grouped, protocol, random_split
from tests.report import sample
from tests.report.sample import BASE, CAND, REC_SPLIT, REC_SUMMARY, SPLIT, SUMMARY


def page(summary=REC_SUMMARY, split=REC_SPLIT) -> list[str]:
    return sample.summary_md(summary, split, "interactions").splitlines()


def test_measures_fall_into_their_groups_by_family():
    assert [group(m) for m in ("HR@10", "nDCG@10", "AUC", "GAUC", "MAP@10", "MRR")] == [
        "ranking"] * 6
    assert [group(m) for m in ("LogLoss", "Brier", "ECE(bins=10, binning='mass')")] == [
        "calibration"] * 3
    assert [group(m) for m in ("Novelty@10", "ILD(space='embedding')@10", "LongTail@10",
                               "LongTail(head=0.2)@10", "Serendipity@10", "Coverage@10",
                               "Gini@10", "Entropy@10")] == ["beyond-accuracy"] * 8
    assert grouped({"a": {"nDCG@10": {}, "Gini@10": {}}, "b": {"HR@10": {}}}) == {
        "ranking": ["nDCG@10", "HR@10"], "beyond-accuracy": ["Gini@10"]}


def test_the_protocol_in_words():
    block = REC_SUMMARY["recommendation"]
    assert protocol(Recommendation.model_validate(block))[1] == (
        "Items a user bought before t are neither recommended nor counted as positives "
        "(exclude_seen).")
    window = protocol(Recommendation.model_validate(
        block | {"negatives": "window", "exclude_seen": False, "held_out_users": 0}))
    assert window[1].endswith("count as positives again (exclude_seen off).")
    assert window[2] == ("AUC and GAUC negatives: the items of the system's window the user "
                         "did not buy.")
    assert not any(line.startswith("Held-out") for line in window)


def test_the_summary_page_groups_the_measures_with_their_counts():
    lines = page()
    assert "| system | HR@10 | nDCG@10 | AUC | GAUC |" in lines
    assert (f"| {BASE} | 0.2500 (n 40 · undef. 2) | 0.5000 (n 40 · undef. 2) | 0.7000 (n 40 · "
            "undef. 2) | 0.6800 (n 38 · undef. 2) |") in lines
    assert "| system | LogLoss | ECE(bins=10) |" in lines
    assert f"| {BASE} | n/a | n/a |" in lines
    assert f"| {CAND} | 0.4321 (n 40 · undef. 0) | 0.0456 (n 40 · undef. 0) |" in lines
    assert f"| {BASE} | 0.1250 (n 40 · undef. 0) | — (n 0 · undef. 40) |" in lines
    heads = [line for line in lines if line.startswith("**")]
    assert [h.split("**")[1] for h in heads] == ["ranking", "calibration", "beyond-accuracy"]
    assert ("One value per system (n = users contributing): GAUC, LogLoss, ECE(bins=10), "
            "Coverage@10.") in lines
    assert any(line.startswith("n = users averaged") for line in lines)
    assert not any(line.startswith("| system | nDCG@10 | R@100") for line in lines)


def test_the_split_section_compares_forward_with_random():
    lines = page()
    assert random_split(sample.model("split_report", SPLIT)) is None
    assert any(line.startswith("Forward-in-time against a random split (a seeded random "
                               "80/20 split of the same log)") for line in lines)
    assert "| system | measure | forward | random | inflation | ratio |" in lines
    assert "| popularity | nDCG@10 | 0.1000 | 0.1250 | +0.0250 | 1.25 |" in lines


def test_a_retrieval_summary_is_unchanged_by_the_recommendation_parts():
    lines = page(SUMMARY, SPLIT)
    assert ("| system | nDCG@10 | R@100 | P@10 | HardNeg@10 | Judged@10 | n | undefined | "
            "missing |") in lines
    assert not any("n/a" in line or "random split" in line for line in lines)


def test_the_headline_shows_hardneg_beside_precision_and_the_qrels_marks():
    lines = page(SUMMARY, SPLIT)
    assert (f"| {BASE} | 0.5000 | — | 0.4000 | 0.1250 (n 42) | 0.8750 (n 42) | 40 | 2 | ? |"
            in lines)
    assert any(line.startswith("HardNeg@k = the share of the top k") and line.endswith(
        "lower is better.") for line in lines)
    assert any(line.startswith("Hard negatives: the qrels mark 8 judgments") for line in lines)
    without = {name: {m: e for m, e in by.items() if m != "HardNeg@10"}
               for name, by in SUMMARY["systems"].items()}
    assert not any(line.startswith("HardNeg@k") for line in page(
        SUMMARY | {"systems": without}, SPLIT))
    na = {"value": None, "n": 0, "undefined": 0, "empty": 0, "applicable": False,
          "level": "query"}
    unmarked = {name: by | {"HardNeg@10": na} for name, by in SUMMARY["systems"].items()}
    assert f"| {BASE} | 0.5000 | — | 0.4000 | n/a | 0.8750 (n 42) | 40 | 2 | ? |" in page(
        SUMMARY | {"systems": unmarked}, SPLIT)


def test_score_ties_get_one_line_per_system_where_a_figure_could_move():
    assert not any("Score ties" in line for line in page(SUMMARY, SPLIT))
    tied = SUMMARY["systems"][CAND] | {
        "AP": SUMMARY["systems"][CAND]["AP"] | {"ties": 2, "tie_range": [0.29, 0.31]},
        "R@100": SUMMARY["systems"][CAND]["R@100"] | {"ties": 0, "tie_range": [0.7, 0.7]}}
    lines = page(SUMMARY | {"systems": {BASE: SUMMARY["systems"][BASE], CAND: tied}}, SPLIT)
    start = next(i for i, line in enumerate(lines) if line.startswith("Score ties ("))
    assert lines[start + 1:start + 4] == [
        "", f"- {CAND}: AP 2 queries · range [0.2900, 0.3100]", ""]


def test_the_summary_has_a_history_part_with_the_runs_and_the_newest_comparison(tmp_path):
    rows = sample.history(tmp_path)
    page = sample.summary_md(SUMMARY, SPLIT, "s", rows)
    lines = page.splitlines()
    at = lines.index("## History")
    part = lines[at:]
    assert part[2].startswith("Lineage (this run is not in the ledger: the newest run's): ")
    assert part[4] == "3 run(s) kept in the ledger (reports/runs/), oldest first; nDCG@10: " \
                      "mean [95% CI]."
    assert ("| # | finished (UTC) | window | receipt | baseline | candidate | fixture: candidate "
            "| decision |") in part
    assert (f"| 2 | 2026-11-08 08:00 | prepare.window.start=2026-11-01 | {rows[1].sha256} | "
            f"{BASE} 0.3000 [0.2500, 0.3500] | {CAND} 0.3200 [0.2700, 0.3700] | "
            f"0.7000 [0.6500, 0.7500] | FAIL: safety {CAND} (UNCONTROLLED) |") in part
    assert any(f"UNCONTROLLED: {NOTE}" in x for x in part)
    assert (f"| {CAND} | nDCG@10 | 0.3200 → 0.6800 | Δ +0.3600 = rate 0.0000 + mix +0.3600 | "
            "0.5000 → 0.5000 | COMPOSITION: the query mix moved the aggregate; no slice moved "
            f"that way | drift: {sample.DRIFT_WHY} |") in part
    without = sample.summary_md(SUMMARY, SPLIT, "s")
    assert "## History" not in without and page.startswith(without.rstrip("\n"))


def test_each_further_horizon_gets_a_line_and_decision_md_its_comparison():
    horizons = {"7": {"users": 30, "users_with_positives_in_horizon": 21, "users_scored": 20,
                      "systems": {BASE: {"nDCG@10": sample.rec_entry(0.25, n=20)},
                                  CAND: {"nDCG@10": sample.rec_entry(0.5, n=20)}}}}
    lines = page(REC_SUMMARY | {"horizons": horizons})
    assert f"- At 7 days: 20 of 30 users scored; nDCG@10: {BASE} 0.2500, {CAND} 0.5000" in lines
    assert not any(line.startswith("- At ") for line in page())
    text = sample.decision_md(comparison=sample.REC_COMPARISON)
    measure = sample.MEASURE
    assert (f"- {measure} Δ at 7 days +0.0500 [+0.0400, +0.0600] over 300 users (improved), "
            "at 28 days +0.0100 [0.0000, +0.0200] over 800 users (too small); NOVELTY: the "
            "gain shrinks by 0.0400 from 7 to 28 days, more than min_effect 0.01") in text
    assert "By horizon" not in sample.decision_md()
