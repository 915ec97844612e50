"""Judging: pooling for blind judgment, judges' files, ingestion, agreement, adjudication,
guidelines.
"""
