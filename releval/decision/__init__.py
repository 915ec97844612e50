"""Deciding: paired comparison and its statistics, aggregates, slices, no-answer, safety, the
release gate.
"""
