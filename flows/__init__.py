"""Prefect flows: run the DVC stages in order and validate their outputs between them."""
