"""The offpolicy section: its policy forms, and what load refuses, naming the key."""

import pytest

from releval.errors import InputError
from releval.params import parse_params


def test_the_three_forms_of_a_policy():
    uniform = parse_params({}).offpolicy
    assert (uniform.log, uniform.table, uniform.system) == (None, None, None)
    table = parse_params({"offpolicy": {"policy": "tables/p.csv"}}).offpolicy
    assert (table.table, table.describe()) == ("tables/p.csv", "the table tables/p.csv")
    ranked = parse_params({"offpolicy": {"policy": {"system": "bm25", "epsilon": 0.1}}}).offpolicy
    assert ranked.system == "bm25" and ranked.table is None
    assert ranked.describe() == "bm25's ranking, rule rank (epsilon 0.1)"


@pytest.mark.parametrize(("raw", "refusal"), [
    ({"offpolicy": {"estimators": ["ips"]}, "gate": {"rules": [{"rule": "off_policy"}]}},
     "params.yaml:gate.rules.0.estimator: 'dr' is not an estimator (offpolicy.estimators: "
     "ips)"),
    ({"offpolicy": {"policy": {"system": "nope"}}},
     "params.yaml:offpolicy.policy.system: 'nope' is not a system"),
    ({"prepare": {"source": "logged_feedback"}},
     "params.yaml:offpolicy.log: prepare.source logged_feedback reads offpolicy.log"),
    ({"offpolicy": {"clip": 0}}, "params.yaml:offpolicy.clip: Input should be greater than 0"),
    ({"offpolicy": {"estimators": ["ipw"]}}, "params.yaml:offpolicy.estimators.0: Input should"),
    ({"gate": {"rules": [{"rule": "off_policy", "margin": -0.1}]}},
     "params.yaml:gate.rules.0.off_policy.margin: Input should be greater than or equal to 0"),
])
def test_refused_at_load_naming_the_key(raw, refusal):
    with pytest.raises(InputError) as caught:
        parse_params(raw)
    assert str(caught.value).startswith(refusal)
