"""The metrics engine: one registry of measures with written definitions, trec_eval parity."""

from releval.metrics.engine import DEFAULT_MEASURES, Evaluation, evaluate, resolve
from releval.metrics.measures import MEASURES
from releval.metrics.names import Measure, parse_measure, parse_measures

__all__ = ["DEFAULT_MEASURES", "MEASURES", "Evaluation", "Measure", "evaluate",
           "parse_measure", "parse_measures", "resolve"]
