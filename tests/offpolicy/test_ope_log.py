"""The logged-feedback reader: the Open Bandit folder (and its CSV) read as the log contract;
the documented table as CSV and parquet; each contract rule refused in one line naming the
file, the line or row and the rule."""

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.contracts import feature_columns
from releval.errors import InputError
from releval.offpolicy.log import read_log, slate_size
from tests.offpolicy.logs import BTS


def test_the_open_bandit_folder_is_read_as_the_log_contract():
    log = read_log(BTS)
    assert len(log) == 10_000 and list(log.columns[:6]) == list(S.LOG_COLUMNS)
    assert S.USER_ID not in log.columns  # the dataset has no user ids
    assert log[S.CONTEXT_ID].tolist()[:3] == ["0", "1", "2"]  # each impression its own context
    assert log[S.CONTEXT_ID].is_unique and log[S.ITEM_ID].map(type).eq(str).all()
    assert log[S.REWARD].mean() == pytest.approx(0.0042)  # 42 clicks (the README's CTR)
    assert log[S.PROPENSITY].min() == pytest.approx(0.000045)
    assert slate_size(log) == 3 and log[S.POSITION].dtype == np.int64
    assert str(log[S.TIMESTAMP].dtype) == "datetime64[us, UTC]"
    features = feature_columns(log)
    assert len(features) == 84 and features[0] == "user_feature_0"
    assert log["user_feature_0"].map(type).eq(str).all()  # hashed categories: text
    assert log["user-item_affinity_0"].dtype == float
    assert log.attrs == {"source": str(BTS / "all.csv"), "unit": "line"}
    assert log.index[0] == 2  # line numbers: the header is line 1
    pd.testing.assert_frame_equal(read_log(BTS / "all.csv"), log)


def table(**changes) -> pd.DataFrame:
    """A valid documented log of four impressions (two contexts, slate of 3), with ``changes``
    as {column: (row position, value)}; a None column is dropped."""
    frame = pd.DataFrame({
        S.CONTEXT_ID: ["c1", "c1", "c2", "c2"], S.ITEM_ID: ["007", "A", "007", "B"],
        S.POSITION: ["1", "2", "1", "3"], S.REWARD: ["0", "1", "0.5", "0"],
        S.PROPENSITY: ["0.5", "1", "0.25", "0.1"],
        S.TIMESTAMP: ["2024-01-01T10:00:00", "2024-01-01T10:00:00", "2024-01-02 09:00:00+02:00",
                      "2024-01-02T08:00:00Z"],
        S.USER_ID: ["u1", "u1", "u2", "u2"], "device": ["ios", "web", "ios", "web"],
        "age": ["31", "31", None, "40"]})
    for column, change in changes.items():
        if change is None:
            frame = frame.drop(columns=column)
        else:
            frame.loc[change[0], column] = change[1]
    return frame


def test_the_documented_table_is_read_from_csv_and_parquet(tmp_path):
    frame = table()
    frame.to_csv(tmp_path / "log.csv", index=False)
    frame.to_parquet(tmp_path / "log.parquet")
    csv, parquet = read_log(tmp_path / "log.csv"), read_log(tmp_path / "log.parquet")
    for log in (csv, parquet):
        assert list(log.columns) == [*S.LOG_COLUMNS, S.USER_ID, "device", "age"]
        assert log[S.ITEM_ID].tolist() == ["007", "A", "007", "B"]  # ids kept as spelled
        assert log[S.POSITION].tolist() == [1, 2, 1, 3]
        assert log[S.REWARD].tolist() == [0.0, 1.0, 0.5, 0.0]
        assert log[S.TIMESTAMP].tolist()[2] == pd.Timestamp("2024-01-02T07:00:00Z")
        assert log["age"].dtype == float and np.isnan(log["age"].iloc[2])
        assert log["device"].tolist() == ["ios", "web", "ios", "web"]
    assert csv.index.tolist() == [2, 3, 4, 5] and parquet.index.tolist() == [1, 2, 3, 4]


RULES = [  # (changes, slate, the line's rule after "<file>:line <n>: ")
    ({S.PROPENSITY: (1, "0")}, None, "propensity must be in (0, 1], got '0'"),
    ({S.PROPENSITY: (2, "1.5")}, None, "propensity must be in (0, 1], got '1.5'"),
    ({S.PROPENSITY: (0, "high")}, None, "propensity must be a number, got 'high'"),
    ({S.REWARD: (3, "click")}, None, "reward must be a number, got 'click'"),
    ({S.REWARD: (1, "")}, None, "reward is missing"),
    ({S.POSITION: (1, "0")}, None, "position must be an integer ≥ 1, got '0'"),
    ({S.POSITION: (2, "1.5")}, None, "position must be an integer ≥ 1, got '1.5'"),
    ({}, 2, "position must be in 1..2 (the declared slate), got '3'"),
    ({S.TIMESTAMP: (2, "yesterday")}, None,
     "timestamp must be an ISO-8601 timestamp, got 'yesterday'"),
    ({S.ITEM_ID: (1, " ")}, None, "item_id is empty"),
    ({S.CONTEXT_ID: (0, "")}, None, "context_id is missing"),
]


@pytest.mark.parametrize("changes, slate, rule", RULES)
def test_each_contract_rule_is_one_line_naming_file_line_and_rule(tmp_path, changes, slate,
                                                                  rule):
    path = tmp_path / "log.csv"
    table(**changes).to_csv(path, index=False)
    row = next(iter(changes.values()))[0] if changes else 3
    with pytest.raises(InputError) as caught:
        read_log(path, slate_size=slate)
    assert str(caught.value) == f"{path}:line {row + 2}: {rule}"


def test_a_parquet_log_names_the_row(tmp_path):
    path = tmp_path / "log.parquet"
    frame = table()
    frame[S.PROPENSITY] = [0.5, 1.0, 0.0, 0.1]
    frame.to_parquet(path)
    with pytest.raises(InputError, match=r"log\.parquet:row 3: propensity must be in \(0, 1\], "
                                         r"got 0\.0$"):
        read_log(path)


def test_the_required_columns_and_the_layouts_files(tmp_path):
    table(**{S.PROPENSITY: None}).to_csv(tmp_path / "log.csv", index=False)
    with pytest.raises(InputError, match=r"log\.csv: missing column\(s\) propensity \(table "
                                         r"layout: context_id, item_id, position, reward, "
                                         r"propensity, timestamp; found context_id"):
        read_log(tmp_path / "log.csv")
    with pytest.raises(InputError, match=r": no all\.csv in the folder \(the Open Bandit "
                                         r"layout\)$"):
        read_log(tmp_path)
    with pytest.raises(InputError, match=r"slate_size must be an integer ≥ 1, got 0"):
        read_log(tmp_path / "log.csv", slate_size=0)


def test_an_open_bandit_file_breaking_a_rule_names_its_line(tmp_path):
    lines = (BTS / "all.csv").read_text().splitlines()[:6]
    fields = lines[4].split(",")
    fields[5] = "0"  # propensity_score of the 4th impression (line 5)
    lines[4] = ",".join(fields)
    (tmp_path / "all.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        read_log(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'all.csv'}:line 5: propensity_score must be in " \
                                "(0, 1], got '0'"  # the file's own column name


def test_an_open_bandit_file_is_refused_in_its_own_columns(tmp_path):
    """A missing propensity_score is named as such (not the generic table's three columns),
    in one short line; an empty click cell is the click, not the reward."""
    rows = [line.split(",") for line in (BTS / "all.csv").read_text().splitlines()[:8]]
    drop = rows[0].index("propensity_score")
    (tmp_path / "nops.csv").write_text("\n".join(",".join(r[:drop] + r[drop + 1:])
                                                 for r in rows) + "\n")
    with pytest.raises(InputError) as caught:
        read_log(tmp_path / "nops.csv")
    message = str(caught.value)
    assert "missing column(s) propensity_score (open bandit layout:" in message
    assert "context_id" not in message and len(message) < 400
    click = rows[0].index("click")
    rows[3][click] = ""
    (tmp_path / "noclick.csv").write_text("\n".join(",".join(r) for r in rows) + "\n")
    with pytest.raises(InputError, match=r"noclick\.csv:line 4: click is missing$"):
        read_log(tmp_path / "noclick.csv")
