"""The metrics engine: one registry of measures with written definitions, trec_eval parity."""
