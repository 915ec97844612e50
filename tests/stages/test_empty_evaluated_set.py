"""An evaluated set with nothing to measure is refused by the first stage that sees it, in
the data's words (one line, exit status 2), not by a statistic stages later."""


import pandas as pd
import pytest
import yaml

from releval.data import contracts as S
from releval.errors import InputError
from releval.params import Params
from releval.project.inputs import pin
from stages import evaluate, split
from stages import prepare as prepare_stage
from stages.common import main, write_outputs
from tests.stages.test_evaluate_stage import CONFIG, DOCS, INGEST, QUERIES, RUNS, SPLIT

# train purchases; in the test window [2011-11-09, 2011-12-09) only cancellations
LOG = ("user_id,item_id,timestamp,label\n"
       "u1,A,2011-10-02T10:00:00Z,1\nu2,B,2011-10-20T10:00:00Z,1\n"
       "u1,A,2011-11-10T10:00:00Z,0\nu2,B,2011-11-20T10:00:00Z,0\n"
       "u3,A,2011-12-01T10:00:00Z,0\n")
ITEMS = "item_id,title\nA,Red mug\nB,Blue mug\n"
REC = {"split": {"method": "dates", "cuts": ["2011-10-01", "2011-11-09"]},
       "recommend": {"horizon_days": 30}, "evaluate": {"splits": ["test"]}}


def test_a_test_window_of_cancellations_is_refused_by_the_split_stage(tmp_path, monkeypatch,
                                                                      capsys):
    shop = tmp_path / "online-retail"
    shop.mkdir()
    (shop / "interactions.csv").write_text(LOG)
    (shop / "items.csv").write_text(ITEMS)
    values = REC | {"prepare": {"source": "interactions", "path": str(shop)}}
    p = Params.model_validate(values)
    pin(p, tmp_path / "input")
    write_outputs(prepare_stage.run(p, prepare_stage.Inputs(tmp_path / "input")), "raw",
                  tmp_path / "data/raw")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(values))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as end:
        main("split", [])
    assert end.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [f"error: {shop}: no test user has a positive interaction in the window "
                     "2011-11-09 … 2011-12-09: its 3 interactions are all cancellations "
                     "(label 0)"]
    assert not (tmp_path / "data/split").exists()


def test_an_evaluated_split_without_queries_is_refused_naming_the_cuts():
    queries = pd.DataFrame({S.QUERY_ID: ["q1", "q2"], S.TEXT: ["a", "b"],
                            S.ISSUED_AT: pd.to_datetime(["2024-01-01", "2024-02-01"], utc=True)})
    p = Params.model_validate({"split": {"method": "dates",
                                         "cuts": ["2024-03-01", "2024-05-01"]}})
    with pytest.raises(InputError, match=r"^data/raw/queries.parquet: no query in the "
                       r"evaluated split test \(cuts 2024-03-01 and 2024-05-01: "):
        split.run(p, split.Inputs(queries, DOCS, pd.DataFrame(columns=[S.QUERY_ID, S.DOC_ID,
                                                                       S.GRADE]),
                  pd.DataFrame(columns=[S.QUERY_ID, S.SPLIT]), {}, pd.DataFrame()))


def test_evaluated_queries_without_a_visible_relevant_judgment_are_refused():
    judged = pd.DataFrame({S.QUERY_ID: ["q1", "q2"], S.DOC_ID: ["d2", "d5"],
                           S.GRADE: [0, 3]})  # q1: not relevant; q2: another tenant's
    with pytest.raises(InputError) as refused:
        evaluate.run(Params.model_validate(CONFIG), evaluate.Inputs(RUNS, judged, SPLIT, QUERIES,
                                                                    DOCS, INGEST))
    assert str(refused.value) == (
        "data/judgments/qrels.parquet: none of the 3 evaluated queries (test) has a relevant "
        "judgment (grade ≥ 1) it may see: 2 judgments of them, 1 relevant ones invisible to "
        "their query (published later, deleted, another tenant or ACL)")
