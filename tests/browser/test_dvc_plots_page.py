"""The page ``dvc plots show`` writes, in a real offline Chromium: every plot draws, with no
error and no request that fails (the Vega libraries are inline, not on a CDN)."""

import yaml

from tests.dag import ROOT
from tests.report.test_dvc_plots import dvc_plots_page


def test_every_dvc_plot_draws_offline(browser, tmp_path):
    plots = len(yaml.safe_load((ROOT / "dvc.yaml").read_text())["plots"])
    with browser.open(dvc_plots_page(tmp_path)) as page:
        drawn = page.wait_for(
            f"(() => {{ const n = document.querySelectorAll('body > div svg, body > div canvas')"
            f".length; return n >= {plots} ? n : 0; }})()")
        assert drawn >= plots
        assert page.errors == [] and page.failed_requests == []
