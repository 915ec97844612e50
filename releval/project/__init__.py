"""The project around a run: pinned inputs, receipts and the run ledger, one run at a time.
"""
