"""Candidate generation: the route registry, the routes (BM25, dense, external), embeddings,
fusion, the exact deep re-search.
"""
