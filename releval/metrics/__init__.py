"""The metrics engine: one registry of measures with written definitions, trec_eval parity."""

from releval.metrics.engine import (
    DEFAULT_MEASURES,
    Evaluation,
    Systems,
    evaluate,
    evaluate_systems,
    resolve,
)
from releval.metrics.measures import MEASURES
from releval.metrics.names import parse_measure, parse_measures
from releval.metrics.spec import Measure

__all__ = ["DEFAULT_MEASURES", "MEASURES", "Evaluation", "Measure", "Systems", "evaluate",
           "evaluate_systems", "parse_measure", "parse_measures", "resolve"]
