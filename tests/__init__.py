"""releval's test suite (a regular package: an installed distribution's top-level `tests` cannot shadow it)."""
