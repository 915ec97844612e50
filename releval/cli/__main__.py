"""``python -m releval.cli``."""

from releval.cli import app

app()
