"""releval's test suite: a regular package, so that an installed distribution's own
top-level `tests` package (ppi-python ships one) cannot shadow it."""
