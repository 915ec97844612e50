"""Diagnosing: failure layers, route hits, the inspection worksheet.
"""
