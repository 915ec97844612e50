"""Reporting: the markdown summary and decision documents, and the value formats they share
with the command line.
"""
