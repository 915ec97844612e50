"""A bounded measure's PPI, human-only and automatic-only intervals are clipped to its range
and marked (``releval.decision.ppi.clipped``); an open measure's are left as they are."""

import numpy as np
import pandas as pd

from releval.decision import ppi
from releval.decision.automatic import bounds_of
from releval.documents.agreement_auto import Interval
from releval.report.automatic import _interval


def test_an_interval_beyond_a_bounded_measure_is_clipped_and_says_so():
    ids = [f"q{i}" for i in range(40)]
    auto = pd.Series(np.r_[np.ones(38), 0.99, 0.98], index=ids)  # near the top: ends past 1
    human = pd.Series(np.r_[np.ones(39), 0.5], index=ids)
    raw = ppi.intervals(human, auto, ids[:20])
    assert raw["human_only"]["ci_high"] > 1 or raw["automatic_only"]["ci_high"] > 1
    figures = ppi.clipped(raw, bounds_of("nDCG@10"))
    for key in ppi.INTERVALS:
        f = figures[key]
        assert 0.0 <= f["ci_low"] <= f["ci_high"] <= 1.0
        assert f.get("clipped", False) == (raw[key]["ci_high"] > 1 or raw[key]["ci_low"] < 0)
    clipped = next(figures[k] for k in ppi.INTERVALS if figures[k].get("clipped"))
    assert _interval(Interval.model_validate(clipped)).endswith("(clipped to [0, 1])")
    assert bounds_of("NumRet") is None and ppi.clipped(raw, None) is raw
