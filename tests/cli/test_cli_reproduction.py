"""``releval.cli.reproduction.reproduction_report`` on small TREC files: an identical
reproduction, a changed one with its reproduced baseline (numbers worked by hand), the tables,
and bad input as one-line InputErrors."""

import json
from pathlib import Path

import pytest

from releval.cli.reproduction import reproduction_report
from releval.errors import InputError

QRELS = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "d3", 0), ("q2", "d4", 1), ("q2", "d5", 1)]
ORIGINAL = {"q1": ["d1", "d2", "d3"], "q2": ["d4", "d6", "d5"]}
CHANGED = {"q1": ["d3", "d2", "d1"], "q2": ["d4", "d5"]}
W = (1, 0.95, 0.95 ** 2)  # RBO's weights p^(d−1) at depth 1, 2, 3


def trec(folder: Path, name: str, lists: dict[str, list[str]]) -> Path:
    path = folder / name
    path.write_text("".join(f"{q} Q0 {d} {i + 1} {10 - i}.0 {name}\n"
                            for q, ranked in lists.items() for i, d in enumerate(ranked)))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS))
    return {"qrels": qrels, "original": trec(tmp_path, "original.txt", ORIGINAL),
            "changed": trec(tmp_path, "changed.txt", CHANGED)}


def measured(capsys, *args, **kw) -> dict:
    reproduction_report(*args, fmt="json", **kw)
    return json.loads(capsys.readouterr().out)


def rows(doc: dict, key: str) -> dict[tuple, dict]:
    return {(r.get("system"), r["measure"]): r for r in doc[key]}


def test_identical_reproduction(files, capsys):
    doc = measured(capsys, files["original"], files["original"], files["qrels"], None)
    assert doc["queries"] == {"run": {"original": 2, "reproduced": 2, "both": 2}}
    assert {m: (r["value"], r["n"]) for (_, m), r in rows(doc, "rmse").items()} == {
        "nDCG@10": (0.0, 2), "R@100": (0.0, 2), "RR@10": (0.0, 2)}
    assert {m: r["value"] for (_, m), r in rows(doc, "order").items()} == {"KTU": 1.0,
                                                                           "RBO": 1.0}
    assert "effects" not in doc and "baseline" not in doc


def test_changed_reproduction_with_its_baseline(files, capsys):
    # run: ORIGINAL reproduced as CHANGED; baseline: CHANGED reproduced as ORIGINAL
    doc = measured(capsys, files["original"], files["changed"], files["qrels"], ["RR@10"],
                   baseline_pair=(files["changed"], files["original"]))
    # RR@10: ORIGINAL q1 1, q2 1; CHANGED q1 1/3 (d1 at rank 3), q2 1
    for role in ("run", "baseline"):
        assert rows(doc, "rmse")[role, "RR@10"]["value"] == pytest.approx(
            ((2 / 3) ** 2 / 2) ** 0.5)
    order = rows(doc, "order")
    assert order["run", "KTU"]["value"] == pytest.approx(0.0)  # q1 −1; q2 cut to 2 each: +1
    q1 = (W[1] * 1 / 2 + W[2] * 3 / 3) / sum(W)  # overlaps 0, {d2}, all three
    q2 = (W[0] * 1 / 1 + W[1] * 1 / 2 + W[2] * 2 / 3) / sum(W)  # {d4}, {d4}, {d4, d5}
    assert order["run", "RBO"]["value"] == pytest.approx((q1 + q2) / 2)
    # original pair: baseline CHANGED 2/3 → run ORIGINAL 1 (RI 1/2); reproduced: 1 → 2/3
    effects = rows(doc, "effects")[None, "RR@10"]
    assert effects["ER"] == pytest.approx((-1 / 3) / (1 / 3))
    assert effects["RI_reproduced"] == pytest.approx(-1 / 3)
    assert effects["delta_RI"] == pytest.approx(1 / 2 + 1 / 3)
    assert (effects["n"], effects["undefined"]) == (2, 0)


def test_tables(files, capsys):
    reproduction_report(files["original"], files["changed"], files["qrels"], ["AP"])
    out = capsys.readouterr().out
    assert "RMSE" in out and "KTU" in out and "RBO" in out and "ΔRI" not in out
    reproduction_report(files["original"], files["changed"], files["qrels"], ["AP"],
                        baseline_pair=(files["changed"], files["original"]))
    out = capsys.readouterr().out
    assert "delta_RI" in out and "baseline: " in out


@pytest.mark.parametrize("content, rule", [("", "no ranked document"),
                                           ("q1 Q0 d1 1 x run\n", "")])
def test_bad_run_is_one_line(files, tmp_path, content, rule):
    bad = tmp_path / "bad.txt"
    bad.write_text(content)
    with pytest.raises(InputError) as exc:
        reproduction_report(files["original"], bad, files["qrels"], None)
    assert str(exc.value).startswith(str(bad)) and rule in str(exc.value)
    assert "\n" not in str(exc.value)
