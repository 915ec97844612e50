from pathlib import Path

import pytest
import yaml

from releval.errors import InputError
from releval.params import load_params

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "params.yaml"


def test_project_params_validate_and_overrides_apply():
    p = load_params(PARAMS, ["prepare.source=beir", "prepare.path=x", "candidates.depth=50"])
    assert (p.prepare.source, p.prepare.path, p.candidates.depth) == ("beir", "x", 50)
    assert set(p.candidates.systems) == {"bm25", "dense", "prod_v2", "prod_v3"}
    assert p.systems() == ["bm25", "dense", "prod_v2", "prod_v3", "hybrid"]


@pytest.mark.parametrize("override,rule", [
    ("prepare.sauce=demo", "prepare.sauce: Extra inputs are not permitted"),
    ("prepare.source=csv", "prepare.source"),
    ("candidates.depth=0", "candidates.depth"),
    ("candidates.systems.x.route=teleport", "candidates.systems.x"),
    ("novalue", "is not key=value"),
])
def test_unknown_keys_and_bad_values_are_errors_naming_the_key(override, rule):
    with pytest.raises(InputError, match=rule):
        load_params(PARAMS, [override])


def test_set_overrides_change_only_the_values_and_keep_every_comment(tmp_path):
    from pathlib import Path

    from releval.params import read_raw, write_overrides

    original = (Path(__file__).resolve().parents[1] / "params.yaml").read_text()
    path = tmp_path / "params.yaml"
    path.write_text(original)
    write_overrides(path, ["prepare.source=beir", "prepare.path=../shared/data/cacm",
                           "gate.rules=[]", "candidates.systems.bm25.k1=0.9",
                           "failures.k=5"])
    lines, before = path.read_text().splitlines(), original.splitlines()
    assert "  source: beir          # demo | beir | tables" in lines
    assert any(line.startswith("  path: ../shared/data/cacm") and line.endswith(
        "# BEIR folder or folder of parquet tables (for beir / tables)") for line in lines)
    changed = [b for b in before if b not in lines]
    block = before[before.index("  rules:"):]  # the gate's rules, up to the next section
    block = [line for line in block[:next(i for i, line in enumerate(block)
                                          if line and not line.startswith(" "))] if line.strip()]
    assert len(changed) == 4 + len(block)  # four value lines, and the rules block now `[]`
    comments = [line.split("# ", 1)[1] for line in before if "# " in line]
    lost = [c for c in comments if c not in path.read_text()]
    assert lost == [line.split("# ", 1)[1] for line in block[1:] if "# " in line]
    raw = read_raw(path)
    assert raw["gate"]["rules"] == [] and raw["candidates"]["systems"]["bm25"]["k1"] == 0.9
    assert raw["failures"]["k"] == 5 and raw["prepare"]["source"] == "beir"


def test_set_overrides_add_missing_keys_and_leave_an_unchanged_file_byte_identical(tmp_path):
    from releval.params import read_raw, write_overrides

    path = tmp_path / "params.yaml"
    text = "# team notes\nbase:\n  seed: 3   # lucky\n\nsplit:\n  method: given\n"
    path.write_text(text)
    write_overrides(path, [])
    assert path.read_text() == text
    write_overrides(path, ["base.seed=3", "split.quantiles=[0.6, 0.8]", "pool.depth=20"])
    assert path.read_text().startswith("# team notes\nbase:\n  seed: 3   # lucky\n\nsplit:\n")
    assert read_raw(path) == {"base": {"seed": 3}, "split": {"method": "given",
                              "quantiles": [0.6, 0.8]}, "pool": {"depth": 20}}


@pytest.mark.parametrize("path", ["params.yaml", *sorted(
    str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*.yaml"))])
def test_every_shipped_params_file_parses_and_names_every_key_dvc_yaml_lists(path):
    """DVC refuses to run a stage whose listed params are missing from params.yaml, and
    ``releval run --params examples/<x>.yaml`` makes that file params.yaml."""
    load_params(ROOT / path)
    tree = yaml.safe_load((ROOT / path).read_text())
    missing = []
    for stage in yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"].values():
        for key in stage.get("do", stage).get("params", []):
            node = tree
            for part in str(key).split(".${")[0].split("."):
                if not isinstance(node, dict) or part not in node:
                    missing.append(key)
                    break
                node = node[part]
    assert missing == []


def test_set_overrides_reach_into_a_flow_mapping_and_keep_its_comment(tmp_path):
    from releval.params import read_raw, write_overrides

    path = tmp_path / "params.yaml"
    path.write_text("health:\n  cost:\n    bm25: {per_query: 0.00002, unit: USD}  # a lookup\n")
    write_overrides(path, ["health.cost.bm25.per_query=0.00003"])
    assert path.read_text().endswith("  # a lookup\n")
    assert read_raw(path)["health"]["cost"]["bm25"] == {"per_query": 0.00003, "unit": "USD"}


def test_an_override_that_cannot_be_written_in_place_is_one_line_and_writes_nothing(tmp_path):
    from releval.params import write_overrides

    path = tmp_path / "params.yaml"
    text = "split:\n  quantiles: [0.7,  # a flow sequence over two lines\n    0.85]\n"
    path.write_text(text)
    with pytest.raises(InputError, match="could not set the overrides in place"):
        write_overrides(path, ["split.quantiles=[0.6, 0.8]"])
    assert path.read_text() == text
