from pathlib import Path

import pytest

from releval.errors import InputError
from releval.params import load_params

PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"


def test_project_params_validate_and_overrides_apply():
    p = load_params(PARAMS, ["prepare.source=beir", "prepare.path=x", "candidates.depth=50"])
    assert (p.prepare.source, p.prepare.path, p.candidates.depth) == ("beir", "x", 50)
    assert set(p.candidates.systems) == {"bm25", "dense", "prod_v2"}
    assert p.systems() == ["bm25", "dense", "prod_v2", "hybrid"]


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
