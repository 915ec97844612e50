"""The suites of ``flows.validation`` as Great Expectations ExpectationSuites, run through
GX's pandas engine: the reference the flow's compiled checks are held to
(``tests/flows/test_validation_parity.py``, ``benchmarks/validation_speed.py``), and the
suites for any use of GX itself. The flow never imports this module.

``validate`` gives the same :class:`~flows.validation.ValidationReport` as
``flows.validation.validate``, read from GX's result (SUMMARY format, 5 examples).
"""

from __future__ import annotations

import functools
import logging
import threading
import warnings

import great_expectations as gx
import pandas as pd
from great_expectations.data_context.types.base import ProgressBarsConfig
from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

from flows import validation as V

RESULT_FORMAT = {"result_format": "SUMMARY", "partial_unexpected_count": V.N_EXAMPLES}


def suite(name: str, **params) -> gx.ExpectationSuite:
    """Suite ``name`` built with ``params``, as a GX ExpectationSuite."""
    spec = V.suite(name, **params)
    return gx.ExpectationSuite(name=spec.name, expectations=[
        ExpectationConfiguration(type=e.type, kwargs=dict(e.kwargs)).to_domain_obj()
        for e in spec.expectations])


@functools.cache
def _batch_definition():
    """The one ephemeral GX context's whole-dataframe batch definition (created on first use)."""
    logging.getLogger("great_expectations").setLevel(logging.WARNING)
    context = gx.get_context(mode="ephemeral")
    context.variables.progress_bars = ProgressBarsConfig(globally=False)
    return (context.data_sources.add_pandas("releval")
            .add_dataframe_asset("frame").add_batch_definition_whole_dataframe("whole"))


_LOCK = threading.Lock()  # GX gives every batch of the asset the same id: one at a time
# GX's column-pair metrics read tz-aware columns through Series.values (pandas 3 deprecation)
_GX_PANDAS_WARNING = "Series.values returning an ndarray that drops timezone"


def _error(info: dict) -> str | None:
    """The exception message GX caught, flat or keyed by metric id, else None."""
    infos = [info] if "raised_exception" in info else list(info.values())
    return next((i["exception_message"] or "raised" for i in infos
                 if i.get("raised_exception")), None)


def validate(name: str, frame: pd.DataFrame, **params) -> V.ValidationReport:
    """``flows.validation.validate`` through GX."""
    spec = V.suite(name, **params)
    if not frame.index.is_unique:
        frame = frame.reset_index(drop=True)
    data = V.with_helpers(frame, spec)
    with _LOCK, warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning,
                                message=_GX_PANDAS_WARNING)
        batch = _batch_definition().get_batch(batch_parameters={"dataframe": data})
        result = batch.validate(suite(name, **params), result_format=RESULT_FORMAT)
    position = {(e.type, tuple(V.columns(e.kwargs))): i for i, e in enumerate(spec.expectations)}

    def at(r) -> int:
        return position[r.expectation_config.type, tuple(V.columns(r.expectation_config.kwargs))]

    failed = sorted((r for r in result.results if not r.success), key=at)
    return V.ValidationReport(
        suite=name, success=bool(result.success), rows=len(frame), evaluated=len(result.results),
        params=V.plain(params), failures=[V.failure(
            data, spec.expectations[at(r)], r.result.get("unexpected_count"),
            r.result.get("partial_unexpected_index_list") or [],
            r.result.get("partial_unexpected_list") or [], _error(r.exception_info or {}))
            for r in failed])
