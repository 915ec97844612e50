"""Relations of a bag-of-words BM25 route: term order, absent terms, one analyzer.

- ``term_permutation``: BM25 sums over the query's terms, so permuting the words of a query
  leaves its window identical, scores and tie order included.
- ``absent_term``: a term that occurs in no indexed document adds nothing to any score, so
  asked alone it finds nothing, and added to a query it leaves the documents in both windows
  (the survivors) in the same order with the same scores.
- ``analyzer_agreement``: indexing and querying the same text normalise to the same terms,
  so each word of a trial (as it stands in its document, case and punctuation included),
  asked alone, finds the document it was taken from. Words that bm25s' token pattern and the
  route's stopword list leave no token of (lowercased, unstemmed) are left out: the analyzer
  drops them on both sides.
"""

from __future__ import annotations

import string

import bm25s
import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.selftest.cases import RouteCase, stream
from releval.selftest.generators import SOURCE_DOC, indexed_words
from releval.selftest.relation import Relation, Tally, per_trial, same_windows

LETTERS = np.array(list(string.ascii_lowercase))
ABSENT_LENGTH = 10  # letters of a drawn absent term (after its "qz" prefix)


def _words(case: RouteCase) -> pd.Series:
    return case.queries[S.TEXT].astype(str).str.split()


def _permuted(words: list[str], rng: np.random.Generator) -> list[str]:
    """``words`` in a random order other than their own (rotated by one when the draw
    changed nothing and the words are not all equal)."""
    out = [words[i] for i in rng.permutation(len(words))]
    return out if out != words else words[1:] + words[:1]


def term_permutation(case: RouteCase) -> Tally:
    rng = stream(case.seed, "term_permutation")
    words = _words(case)
    texts = [" ".join(_permuted(w, rng)) for w in words]
    got = case.search(queries=case.queries.assign(**{S.TEXT: texts}))
    distinct = words.map(lambda w: len(set(w)) >= 2).to_numpy()
    return same_windows(case.queries[S.QUERY_ID].to_numpy(),
                        distinct & (case.window_sizes() > 0), case.base, got)


def absent_terms(case: RouteCase, rng: np.random.Generator) -> list[str]:
    """One drawn term per trial ("qz" + letters) that is no substring of any indexed text,
    lowercased."""
    corpus = "\n".join(indexed_words(case.documents).str.join(" ")).lower()
    terms = []
    while len(terms) < len(case.queries):
        term = "qz" + "".join(rng.choice(LETTERS, ABSENT_LENGTH))
        if term not in corpus:
            terms.append(term)
    return terms


def absent_term(case: RouteCase) -> Tally:
    rng = stream(case.seed, "absent_term")
    terms = pd.Series(absent_terms(case, rng), index=case.queries[S.QUERY_ID].to_numpy())
    texts = []
    for words, term in zip(_words(case), terms, strict=True):
        at = int(rng.integers(len(words) + 1))
        texts.append(" ".join([*words[:at], term, *words[at:]]))
    alone = case.search(queries=case.queries.assign(**{S.TEXT: terms.to_numpy()}))
    got = case.search(queries=case.queries.assign(**{S.TEXT: texts}))
    survivors = case.base.merge(got, on=[S.QUERY_ID, S.DOC_ID], suffixes=("", "_got"))
    survivors = survivors.sort_values([S.QUERY_ID, S.RANK], kind="stable")
    after = survivors.groupby(S.QUERY_ID)["rank_got"].diff()
    bad = survivors[(after <= 0) | (survivors[S.SCORE] != survivors["score_got"])]
    bad = bad.drop_duplicates(S.QUERY_ID)
    moved = pd.Series(
        [f"{q}: with the absent term {terms[q]!r}, {d} moves from rank {r} ({s:.9g}) to rank "
         f"{rg} ({sg:.9g})" for q, d, r, s, rg, sg in zip(
             bad[S.QUERY_ID], bad[S.DOC_ID], bad[S.RANK], bad[S.SCORE], bad["rank_got"],
             bad["score_got"], strict=True)], index=bad[S.QUERY_ID].to_numpy(), dtype=object)
    found = alone.drop_duplicates(S.QUERY_ID)
    found = pd.Series([f"{q}: the absent term {terms[q]!r}, asked alone, finds {d}"
                       for q, d in zip(found[S.QUERY_ID], found[S.DOC_ID], strict=True)],
                      index=found[S.QUERY_ID].to_numpy(), dtype=object)
    ids = case.queries[S.QUERY_ID]
    examples = per_trial(ids, found.combine_first(moved))
    return Tally.of(case.window_sizes() > 0, examples)


def analyzer_agreement(case: RouteCase) -> Tally:
    words = _words(case)
    trial = np.repeat(np.arange(len(words)), words.str.len().to_numpy())
    flat = [w for ws in words for w in ws]
    tokens = bm25s.tokenize(flat, lower=True, stopwords=getattr(case.config, "stopwords", None),
                            stemmer=None, return_ids=False, show_progress=False)
    keep = np.array([len(t) > 0 for t in tokens], bool)
    trial, flat = trial[keep], [w for w, k in zip(flat, keep, strict=True) if k]
    probes = case.queries.iloc[trial].assign(
        **{S.QUERY_ID: [f"{q}/{i}" for i, q in enumerate(case.queries[S.QUERY_ID].iloc[trial])],
           S.TEXT: flat}).reset_index(drop=True)
    run = case.search(queries=probes, depth=len(case.documents))
    hit = run.merge(probes[[S.QUERY_ID, SOURCE_DOC]], left_on=[S.QUERY_ID, S.DOC_ID],
                    right_on=[S.QUERY_ID, SOURCE_DOC])
    missed = ~probes[S.QUERY_ID].isin(hit[S.QUERY_ID]).to_numpy()
    n = len(case.queries)
    reached = np.bincount(trial, minlength=n) > 0
    held = np.bincount(trial[missed], minlength=n) == 0
    examples = np.full(n, "", dtype=object)
    rows = np.flatnonzero(missed)
    for row in rows[np.unique(trial[rows], return_index=True)[1]]:  # a trial's first miss
        examples[trial[row]] = (f"{case.queries[S.QUERY_ID].iloc[trial[row]]}: the word "
                                f"{flat[row]!r}, asked alone, does not find "
                                f"{probes[SOURCE_DOC].iloc[row]}, the document it is from")
    return Tally.of(reached, examples, held)


ROUTES = ("bm25",)
RELATIONS = (
    Relation("term_permutation", "route",
             "the trial has at least two distinct words and a non-empty window",
             "permuting the query's words leaves the window identical, tie order included",
             term_permutation, ROUTES),
    Relation("absent_term", "route",
             "the added term is a substring of no indexed text and the trial's window is "
             "non-empty",
             "the term alone finds nothing, and adding it leaves the survivors in order, "
             "with their scores", absent_term, ROUTES),
    Relation("analyzer_agreement", "route",
             "a word of the trial leaves a token after bm25s' token pattern and the route's "
             "stopwords (lowercased, unstemmed)",
             "each word of a document, asked alone, finds that document: the index and the "
             "query normalise it to the same terms", analyzer_agreement, ROUTES),
)
