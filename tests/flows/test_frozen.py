"""The flow keeps what it holds before the stages out of the collector's passes, and
releases it after them (flows.pipeline.frozen)."""

import gc

from flows.pipeline import frozen


def test_the_flow_freezes_its_heap_for_the_stages_and_releases_it():
    with frozen():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
