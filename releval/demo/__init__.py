"""The demo: a generated support-search corpus and log, simulated judges, a simulated team run.
"""
