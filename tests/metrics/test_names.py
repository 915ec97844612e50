import pytest

from releval.errors import InputError
from releval.metrics.names import parse_measure, parse_measures


@pytest.mark.parametrize("text,name", [
    ("nDCG@10", "nDCG@10"), ("ndcg_cut.10", "nDCG@10"), ("ndcg_cut_10", "nDCG@10"),
    ("ndcg", "nDCG"), ("P(rel=2)@5", "P(rel=2)@5"), ("P.5", "P@5"), ("P_5", "P@5"),
    ("R@100", "R@100"), ("recall.100", "R@100"), ("RR@10", "RR@10"), ("recip_rank", "RR"),
    ("AP", "AP"), ("map", "AP"), ("map_cut.10", "AP@10"), ("Judged@10", "Judged@10"),
    ("Rprec", "Rprec"), ("bpref", "Bpref"), ("num_ret", "NumRet"), ("num_rel", "NumRel"),
    ("num_rel_ret", "NumRelRet"), ("success.1", "Hit@1"), ("Success@5", "Hit@5"),
    ("R_cap@10", "R_cap@10"), ("nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@10"),
    ("nDCG(gains={0: 0, 1: 1, 2: 3})@5", "nDCG(gains={0: 0, 1: 1, 2: 3})@5"),
])
def test_both_naming_styles_parse_to_canonical_names(text, name):
    assert parse_measure(text).name == name


def test_default_rel_enters_the_name_and_an_explicit_rel_wins():
    assert parse_measure("P@5", rel=2).name == "P(rel=2)@5"
    assert parse_measure("P(rel=3)@5", rel=2).name == "P(rel=3)@5"
    assert parse_measure("nDCG@5", rel=2).name == "nDCG@5"


def test_trec_cut_lists_expand():
    assert [m.name for m in parse_measures("P.5,10")] == ["P@5", "P@10"]
    assert len(parse_measures("ndcg_cut")) == 9


@pytest.mark.parametrize("text,rule", [
    ("foo@3", "unknown measure"), ("P", None), ("R", "needs a cutoff"),
    ("AP(dcg='log2')", "takes no parameter dcg"), ("Rprec@5", "takes no cutoff"),
    ("nDCG(dcg='cubic')", "dcg must be one of"), ("P(rel=-1)@5", "rel must be"),
])
def test_bad_names_say_why(text, rule):
    if rule is None:  # bare trec family: default cutoffs
        assert len(parse_measures(text)) == 9
        return
    with pytest.raises(InputError, match=rule):
        parse_measures(text)
