"""``python -m releval.cli``."""

from releval.cli import main

main()
