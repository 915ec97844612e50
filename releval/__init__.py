"""releval: offline evaluation of retrieval and candidate generation."""

__version__ = "0.1.0"
