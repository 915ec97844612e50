"""Deterministic demo data: an internal-support knowledge base, its query log and hidden graded
relevance, following the documents / queries / qrels contracts of docs/architecture.md,
written from the tables of ``releval.demo.vocabulary``.

``generate(...)`` returns ``DemoData(documents, queries, ground_truth, must_not_return)``; the
same arguments give identical frames (only ``numpy.random.Generator(seed)`` draws randomness,
the near-duplicates last, so without them every other row is as it would be; but the second
requests of multi-intent queries, drawn from a stream of their own seeded ``[seed, 1]``).

- documents (``S.DOCUMENT_COLUMNS``): chunks of knowledge-base articles. Chunks of one article
  share ``source_id`` (``acme-kb00042``) and are numbered ``acme-kb00042#0``, ``#1``, ...
  Articles are troubleshooting notes (a model number such as ``XR-220``, an error code such
  as ``E-4012``), datasheets (numbers), how-to guides (in pairs that differ by a negation:
  a factory reset *erases* data, a soft reset *retains* it) and internal runbooks
  (acl ``["staff"]``, sometimes ``["admin"]``). Statuses are mostly ``published``;
  ``deleted_at`` is set only for ``deleted`` and is never before ``published_at``.
  Near-duplicates: for a ``near_duplicates`` share of the troubleshooting articles
  (``V.NEAR_DUPLICATE_SHARE``), one more note of a single chunk, numbered after the articles
  and at the end of the table, that copies the article's answer chunk (title and text) but
  names a wrong model number of the same prefix and, for about half of them
  (``V.WRONG_CODE_SHARE``), a wrong error code of the same letter too (each a few numbers up,
  one that no article uses); it keeps the article's publication, status, tenant and acl.
- queries (``S.QUERY_COLUMNS`` + ``S.QUERY_SOURCE``): one row per issued query, sorted by
  ``issued_at``. ``source`` says how it was sampled: ``template`` for the error_code,
  authz_boundary and no_answer probes (``V.TEMPLATE_KINDS``: written to a template), ``logged``
  for every other query (sampled from traffic). ``weight`` is the traffic a query stands for:
  a logged query's own, a template probe's that of the traffic it stands in for, drawn alike
  (repeats × 0.8–1.2 when head, 0.2–1.0 when tail), so weighted figures treat both the same.
  ``tags`` holds ``head`` (the same text issued several times by different users, weight
  above 1) or ``tail`` (issued once, weight at most 1), plus the kind of query:
  ``error_code`` and ``numeric`` quote the code or model number of the answer verbatim
  (lexical retrieval wins); ``paraphrase`` describes the problem in colloquial words that
  the answer does not use (semantic retrieval wins); ``typo`` misspells one word;
  ``negation`` asks for the *without* variant of a how-to whose *with* twin is judged
  not relevant; ``authz_boundary`` is asked by a user who may not see the answer;
  ``no_answer`` has no relevant document. Risk tags follow: ``high_risk`` and its domain
  (``S.RISK_DOMAINS``) where the text names a service, an operation or a symptom of
  ``V.SERVICE_RISK``, ``V.OPERATION_RISK`` or ``V.SYMPTOM_RISK`` (e.g. ``high_risk``,
  ``finance`` for the billing database), else where its second request has a domain; and
  ``multi_intent`` on the plain queries (``V.MULTI_INTENT_SHARE`` of them) that ask a second
  thing no document answers (``... and also salary advance``), so their ground truth is that
  of the first request. A query's answer was published before it was issued, except for about
  2% (the answer came later).
- ground_truth (``S.QRELS_COLUMNS`` + ``S.HARD_NEGATIVE``): grade 3 = the chunk holding the
  answer, 2 = the other chunks of that article, 1 = answer chunks of up to two related
  articles (same model, or same service for runbooks), 0 = one near miss judged not relevant
  (the negated twin, the same symptom on another model, another datasheet of the family, the
  same operation on another service) and the near-duplicate of the answer's article, if it
  has one. ``hard_negative`` marks the grade-0 rows that are deliberately close: the negated
  twin, a near miss about another model (service for runbooks) and every near-duplicate; a
  near miss about the same model or service is not marked. Grades ignore visibility: access
  and time rules are applied by retrieval.
- must_not_return (``S.MUST_NOT_RETURN_COLUMNS``): for every query tagged ``authz_boundary``,
  each of its ground-truth documents (any grade) that the query may not see by the visibility
  rule, with reason ``restricted answer: <acl groups> only`` (e.g. ``restricted answer: staff
  only``); the few of them hidden by time or status rather than by an ACL read
  ``restricted answer: not visible (<visibility reason>)``. In ground-truth order.

``GUEST_RUNBOOK_QUERY_ID`` names the guaranteed authz case: a guest asks for a procedure
that only internal runbooks (acl ``["staff"]``) answer; every document in its ground truth
has acl ``["staff"]``. (Other guest queries tagged ``authz_boundary`` are alike, but their
runbooks may be ``["admin"]`` or internal troubleshooting notes.)

Work is vectorised over documents and queries (never documents × queries): under 0.1 s for
5,000 documents and 1,000 queries, under a second for 100,000 documents (the error-code space
A-1000..Z-9999 bounds n_docs at about two million).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.visibility import forbidden_reasons
from releval.demo import vocabulary as V

GUEST_RUNBOOK_QUERY_ID = "q000000"
MIN_DOCS, MIN_QUERIES = 50, 20

_FORMAT = string.Formatter()


@dataclass(frozen=True)
class DemoData:
    """Generated tables: documents and queries (contract columns), hidden ground truth
    (query_id, doc_id, grade, hard_negative) and the must_not_return pairs (query_id, doc_id,
    reason)."""

    documents: pd.DataFrame
    queries: pd.DataFrame
    ground_truth: pd.DataFrame
    must_not_return: pd.DataFrame


def _text(values, width: int = 0) -> np.ndarray:
    """Any array as an object array of Python str (the operand type of ``_fill``), optionally
    zero-padded to ``width``."""
    text = np.asarray(values).astype(str)
    return (np.char.zfill(text, width) if width and text.size else text).astype(object)


def _fill(templates: np.ndarray, fields: dict[str, np.ndarray]) -> np.ndarray:
    """Vectorised ``str.format``: row i is ``templates[i].format(**{k: v[i] for k, v})``.

    One pass per distinct template, concatenating whole columns, so the cost is
    O(rows × fields) in numpy, never a Python call per row.
    """
    out = np.empty(len(templates), dtype=object)
    codes, uniques = pd.factorize(templates)
    for code, template in enumerate(uniques):
        rows = np.flatnonzero(codes == code)
        text = np.full(len(rows), "", dtype=object)
        for literal, name, _, _ in _FORMAT.parse(template):
            text = text + literal
            if name:
                text = text + fields[name][rows]
        out[rows] = text
    return out


def _allocate(rng: np.random.Generator, n: int, shares) -> np.ndarray:
    """n labels 0..len(shares)-1 in random order: each at least once, the rest in proportion."""
    shares = np.asarray(shares, float)
    counts = 1 + np.floor(shares / shares.sum() * (n - len(shares))).astype(int)
    counts[0] += n - counts.sum()
    return rng.permutation(np.repeat(np.arange(len(shares)), counts))


def _neighbours(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For rows grouped by equal ``keys`` rows (n × k ints): the previous and next row of the
    same group in row order, -1 where there is none."""
    order = np.lexsort(keys.T[::-1])
    same = (keys[order][1:] == keys[order][:-1]).all(axis=1)
    prev, nxt = np.full(len(keys), -1), np.full(len(keys), -1)
    prev[order[1:]] = np.where(same, order[:-1], -1)
    nxt[order[:-1]] = np.where(same, order[1:], -1)
    return prev, nxt


def _pick(rng: np.random.Generator, pool: np.ndarray, published: np.ndarray, at: np.ndarray,
          future: np.ndarray) -> np.ndarray:
    """For each time in ``at``, a random member of ``pool`` published by then; one published
    later where ``future`` asks for it or none was published yet."""
    if len(pool) == 0:
        raise ValueError("too few documents for every kind of query; raise n_docs")
    pool = pool[np.argsort(published[pool], kind="stable")]
    before = np.searchsorted(published[pool], at, side="right")
    later = (future | (before == 0)) & (before < len(pool))
    u = rng.random(len(at))
    index = np.where(later, before + u * (len(pool) - before), u * before).astype(int)
    return pool[index]


def _misspell(rng: np.random.Generator, texts: np.ndarray) -> np.ndarray:
    """Swap two different adjacent inner letters of one word of 5+ letters in each text.

    Every keyword query of a troubleshooting note or how-to has such a word (see
    ``releval.demo.vocabulary``).
    """
    out = []
    for text, u, v in zip(texts, rng.random(len(texts)), rng.random(len(texts)), strict=True):
        words = text.split(" ")
        long = [i for i, w in enumerate(words) if w.isalpha() and len(w) >= 5]
        i = long[int(u * len(long))]
        word = words[i]
        spots = [p for p in range(1, len(word) - 2) if word[p] != word[p + 1]]
        p = spots[int(v * len(spots))]
        words[i] = word[:p] + word[p + 1] + word[p] + word[p + 2:]
        out.append(" ".join(words))
    return np.array(out, dtype=object)


def _choose(rng: np.random.Generator, family: np.ndarray, field: int, names) -> np.ndarray:
    """For each family, a random index into ``names`` among those ``V.FAMILIES[f][field]`` lists."""
    options = [[names.index(x) for x in f[field]] for f in V.FAMILIES]
    table = np.array([o + o[:1] * (len(names) - len(o)) for o in options])
    count = np.array([len(o) for o in options])
    return table[family, (rng.random(len(family)) * count[family]).astype(int)]


def _utc(seconds: np.ndarray) -> pd.Series:
    """Seconds since the epoch as UTC timestamps."""
    return pd.Series(pd.to_datetime(seconds, unit="s", utc=True))


def _strings(values) -> pd.Series:
    """A column of pandas' string dtype."""
    return pd.Series(values, dtype="str")


_PREFIXES = np.array([p for f in V.FAMILIES for p in f[2]], dtype=object)


def _model_names(model_id: np.ndarray) -> np.ndarray:
    """Model numbers (``XR-220``) of model ids: prefix index × MODEL_NUMBERS + number − 100."""
    return _PREFIXES[model_id // V.MODEL_NUMBERS] + "-" + _text(100 + model_id % V.MODEL_NUMBERS)


def _code_names(code_id: np.ndarray) -> np.ndarray:
    """Error codes (``E-4012``) of code ids: letter index × CODE_NUMBERS + number − 1000."""
    return V.CODE_LETTERS[code_id // V.CODE_NUMBERS] + "-" + _text(1000 + code_id % V.CODE_NUMBERS)


def _sources(rng: np.random.Generator, n_docs: int, tenants: int, t0: int, t1: int) -> dict:
    """Articles, one entry per article: kind, attributes, status, times and chunk layout
    (``first`` chunk, ``n_chunks``, ``answer`` = position of the chunk holding the answer)."""
    n_chunks = np.clip(1 + rng.poisson(2.2, n_docs), 1, V.MAX_CHUNKS)
    ends = np.cumsum(n_chunks)
    n = int(np.searchsorted(ends, n_docs)) + 1
    n_chunks = n_chunks[:n]
    n_chunks[-1] -= ends[n - 1] - n_docs
    kind = _allocate(rng, n, V.KIND_SHARES)
    howto = np.flatnonzero(kind == V.HOWTO)
    kind[howto[len(howto) // 2 * 2:]] = V.TROUBLE  # how-tos come in pairs
    howto = howto[: len(howto) // 2 * 2]
    tenant_p = 1 / np.arange(1, tenants + 1)
    tenant = rng.choice(tenants, n, p=tenant_p / tenant_p.sum())

    n_models = int(np.clip(n // 5, 20, len(V.FAMILIES) * 2 * V.MODEL_NUMBERS))
    model_ids = rng.choice(len(V.FAMILIES) * 2 * V.MODEL_NUMBERS, n_models, replace=False)
    model = rng.integers(n_models, size=n)
    pair = np.full(n, -1)
    pair[howto] = np.arange(len(howto)) // 2
    variant = np.zeros(n, int)
    variant[howto[1::2]] = 1
    twin = howto[0::2].repeat(2)  # both how-tos of a pair share tenant, model and procedure
    tenant[howto], model[howto] = tenant[twin], model[twin]
    mid = model_ids[model]
    family = mid // (2 * V.MODEL_NUMBERS)
    proc = _choose(rng, family, 4, V.PROCEDURE_NAMES)
    proc[howto] = proc[twin]

    acl = np.full(n, V.OPEN)
    acl[(kind == V.TROUBLE) & (rng.random(n) < V.INTERNAL_TROUBLE_SHARE)] = V.STAFF
    runbook_acl = np.where(rng.random(n) < V.ADMIN_RUNBOOK_SHARE, V.ADMIN, V.STAFF)
    acl[kind == V.RUNBOOK] = runbook_acl[kind == V.RUNBOOK]
    acl[np.argmax(kind == V.RUNBOOK)] = V.STAFF
    status = rng.choice(len(S.STATUSES), n, p=V.STATUS_SHARES)
    for needed in (kind == V.TROUBLE, kind == V.SPEC, variant == 1,
                   (kind == V.RUNBOOK) & (acl == V.STAFF)):
        status[np.argmax(needed)] = V.PUBLISHED  # every kind of query has an answer to ask for
    published = rng.integers(t0, t1, size=n)
    deleted = np.where(status == V.DELETED, published + rng.integers(86_400, 120 * 86_400, n), -1)

    trouble = np.flatnonzero(kind == V.TROUBLE)
    code_id = np.full(n, -1)
    code_id[trouble] = rng.choice(len(V.CODE_LETTERS) * V.CODE_NUMBERS, len(trouble),
                                  replace=False)
    code = np.full(n, "", dtype=object)
    code[trouble] = _code_names(code_id[trouble])
    fw = (_text(rng.integers(1, 6, n)) + "." + _text(rng.integers(0, 10, n)) + "."
          + _text(rng.integers(0, 20, n)))
    values = np.stack([np.array(a[3])[rng.integers(len(a[3]), size=n)] for a in V.SPEC_ATTRS], 1)
    return dict(
        n=n, kind=kind, tenant=tenant, acl=acl, status=status, published=published,
        deleted=deleted, n_chunks=n_chunks, first=np.cumsum(n_chunks) - n_chunks,
        answer=(rng.random(n) * n_chunks).astype(int), model_index=model, model_id=mid,
        model=_model_names(mid), family=family, code_id=code_id, code=code, fw=fw,
        values=values,
        symptom=_choose(rng, family, 3, V.SYMPTOM_NAMES), cause=rng.integers(len(V.CAUSES), size=n),
        pair=pair, variant=variant,
        proc=proc, service=rng.integers(len(V.SERVICES), size=n),
        operation=rng.integers(len(V.OPERATIONS), size=n),
        attr_offset=rng.integers(len(V.SPEC_ATTRS), size=n))


def _column(table, index: np.ndarray, item: int | None = None) -> np.ndarray:
    """``table[i][item]`` (or ``table[i]``) for each i in index, as an object array."""
    values = [row if item is None else row[item] for row in table]
    return np.array(values, dtype=object)[index]


def _howto(item: int) -> np.ndarray:
    """Item (0 keyword, 1 title, 2 answer) of each how-to variant, indexed proc * 2 + variant."""
    return np.array([v[item] for p in V.PROCEDURES for v in p[0]], dtype=object)


def _fields(src: dict) -> dict[str, np.ndarray]:
    """The template fields of each article (``{model}``, ``{family}``, ...)."""
    return dict(model=src["model"], family=_column(V.FAMILIES, src["family"], 0),
                symptom=_column(V.SYMPTOMS, src["symptom"], 0),
                symptom_title=_column(V.SYMPTOMS, src["symptom"], 1), code=src["code"],
                fw=src["fw"],
                service=_column(V.SERVICES, src["service"]),
                op_title=_column(V.OPERATIONS, src["operation"], 0))


def _documents(src: dict, names: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The documents table (one row per chunk) and its doc_id array."""
    n, kind = src["n"], src["kind"]
    source_id = names[src["tenant"]] + "-kb" + _text(np.arange(n), 5)
    fields = _fields(src)
    how = src["proc"] * 2 + src["variant"]
    title = np.select(
        [kind == V.TROUBLE, kind == V.SPEC, kind == V.HOWTO],
        [np.full(n, V.TROUBLE_TITLE, dtype=object),
         np.full(n, "{model} {family} technical specifications", dtype=object), _howto(1)[how]],
        np.full(n, "Runbook: {service} {op_title}", dtype=object))
    title = _fill(title, fields)

    of = np.repeat(np.arange(n), src["n_chunks"])
    pos = np.arange(len(of)) - src["first"][of]
    answer, ckind = pos == src["answer"][of], kind[of]
    attr = (src["attr_offset"][of] + pos) % len(V.SPEC_ATTRS)
    filler = pos + of
    template = np.select(
        [ckind == V.SPEC, answer & (ckind == V.TROUBLE), answer & (ckind == V.HOWTO),
         answer & (ckind == V.RUNBOOK), ckind == V.RUNBOOK],
        [_column(V.SPEC_ATTRS, attr, 0), _column(V.TROUBLE_ANSWERS, src["cause"][of]),
         _howto(2)[how[of]], _column(V.OPERATIONS, src["operation"][of], 2),
         _column(V.RUNBOOK_FILLERS, filler % len(V.RUNBOOK_FILLERS))],
        _column(V.PRODUCT_FILLERS, filler % len(V.PRODUCT_FILLERS)))
    chunk_fields = {k: v[of] for k, v in fields.items()}
    chunk_fields["value"] = _text(src["values"][of, attr])
    doc_id = source_id[of] + "#" + _text(pos)
    published = _utc(src["published"][of])
    deleted = _utc(src["deleted"][of]).where(src["deleted"][of] >= 0)
    documents = pd.DataFrame({
        S.DOC_ID: _strings(doc_id), S.TITLE: _strings(title[of]),
        S.TEXT: _strings(_fill(template, chunk_fields)), S.SOURCE_ID: _strings(source_id[of]),
        S.PUBLISHED_AT: published, S.STATUS: _strings(np.array(S.STATUSES)[src["status"][of]]),
        S.DELETED_AT: deleted, S.TENANT: _strings(names[src["tenant"][of]]),
        S.ACL: [list(V.ACLS[a]) for a in src["acl"][of]]})
    return documents, doc_id


def _nearby(rng: np.random.Generator, ids: np.ndarray, block: int,
            used: np.ndarray) -> np.ndarray:
    """For each id, a wrong one of its block (``ids // block``: the model prefix or the code
    letter) a few steps up: the first of d, d + 1, ... (d drawn in 1..NEAR_STEPS, wrapping
    within the block) that ``used`` does not hold; d itself when all NEAR_TRIES are used."""
    steps = rng.integers(1, V.NEAR_STEPS + 1, len(ids))[:, None] + np.arange(V.NEAR_TRIES)
    tries = (ids - ids % block)[:, None] + (ids[:, None] % block + steps) % block
    free = ~np.isin(tries, used)
    return tries[np.arange(len(ids)), np.where(free.any(axis=1), free.argmax(axis=1), 0)]


def _near_duplicates(rng: np.random.Generator, src: dict, share: float) -> dict:
    """Near-duplicates of a ``share`` of the troubleshooting articles: ``of`` (the article
    copied), the wrong ``model`` number each names and its ``code`` (wrong for about
    WRONG_CODE_SHARE of them, else the article's own)."""
    trouble = np.flatnonzero(src["kind"] == V.TROUBLE)
    of = trouble[rng.random(len(trouble)) < share]
    model = _model_names(_nearby(rng, src["model_id"][of], V.MODEL_NUMBERS, src["model_id"]))
    wrong = rng.random(len(of)) < V.WRONG_CODE_SHARE
    code = np.where(wrong, _code_names(_nearby(rng, src["code_id"][of], V.CODE_NUMBERS,
                                               src["code_id"][trouble])), src["code"][of])
    return dict(of=of, model=model, code=code)


def _duplicate_documents(src: dict, dup: dict, documents: pd.DataFrame,
                         names: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """One single-chunk note per near-duplicate, numbered after the articles: the copied
    answer chunk's title and text with the wrong model number (and code), its publication,
    status, tenant and acl; and the doc_id array."""
    of = dup["of"]
    fields = {k: v[of] for k, v in _fields(src).items()} | {"model": dup["model"],
                                                             "code": dup["code"]}
    source_id = names[src["tenant"][of]] + "-kb" + _text(src["n"] + np.arange(len(of)), 5)
    doc_id = source_id + "#0"
    copied = documents.iloc[src["first"][of] + src["answer"][of]].reset_index(drop=True)
    near = copied.assign(**{
        S.DOC_ID: _strings(doc_id), S.SOURCE_ID: _strings(source_id),
        S.TITLE: _strings(_fill(np.full(len(of), V.TROUBLE_TITLE, dtype=object), fields)),
        S.TEXT: _strings(_fill(_column(V.TROUBLE_ANSWERS, src["cause"][of]), fields)),
        S.ACL: [list(acl) for acl in copied[S.ACL]]})
    return near, doc_id


def _users(rng: np.random.Generator, n_queries: int, names: np.ndarray) -> dict:
    """Users per tenant, each role at least once: id, tenant, role and groups."""
    per = max(len(S.ROLES), n_queries // (4 * len(names)))
    tenant = np.repeat(np.arange(len(names)), per)
    role = rng.choice(len(S.ROLES), (len(names), per), p=V.ROLE_SHARES)
    role[:, : len(S.ROLES)] = np.arange(len(S.ROLES))
    role = role.ravel()
    team = _column(V.TEAMS, rng.integers(len(V.TEAMS), size=len(role)))
    groups = [("public",) if r == V.GUEST else ("staff", "admin") if r == V.ADMIN_ROLE
              else ("staff", t) for r, t in zip(role, team, strict=True)]
    user_id = names[tenant] + "-u" + _text(np.tile(np.arange(per), len(names)), 4)
    return dict(tenant=tenant, role=role, groups=groups, user_id=user_id)


def _intents(rng: np.random.Generator, src: dict, n_queries: int, t0: int, t1: int) -> dict:
    """Distinct queries: kind, target article (-1: none), first issue time, repetitions.

    Intent 0 is the guest's question answered only by an internal (acl staff) runbook."""
    head_rows = int(V.HEAD_SHARE * n_queries)
    repeats = np.minimum(1 + rng.geometric(0.25, size=head_rows), head_rows)
    n_head = int(np.searchsorted(np.cumsum(repeats), head_rows, side="right"))
    n_tail = n_queries - int(repeats[:n_head].sum())
    repeats = np.concatenate([[1], repeats[:n_head], np.ones(n_tail - 1, int)])
    n = len(repeats)
    kind = np.concatenate([[V.AUTHZ], _allocate(rng, n - 1, V.QUERY_SHARES)])
    at = rng.integers(t0 + (t1 - t0) // 24, t1, size=n)
    future = rng.random(n) < V.FUTURE_SHARE
    future[0] = False

    published, skind = src["published"], src["kind"]
    live = src["status"] == V.PUBLISHED
    pools = {V.PLAIN: live, V.ERROR_CODE: live & (skind == V.TROUBLE),
             V.NUMERIC: live & (skind == V.SPEC),
             V.PARAPHRASE: live & (skind == V.TROUBLE),
             V.TYPO: live & ((skind == V.TROUBLE) | (skind == V.HOWTO)),
             V.NEGATION: live & (skind == V.HOWTO) & (src["variant"] == 1),
             V.AUTHZ: live & (src["acl"] != V.OPEN)}
    target = np.full(n, -1)
    for k, pool in pools.items():
        rows = np.flatnonzero(kind == k)
        target[rows] = _pick(rng, np.flatnonzero(pool), published, at[rows], future[rows])
    # the guest's runbook: service and operation words that no open document uses
    private = np.isin(src["operation"], V.GUEST_OPERATIONS) & ~np.isin(
        src["service"], V.SHARED_VOCABULARY_SERVICES)
    staff = live & (skind == V.RUNBOOK) & (src["acl"] == V.STAFF)
    staff_runbooks = np.flatnonzero(staff & private if (staff & private).any() else staff)
    target[0] = _pick(rng, staff_runbooks, published, np.array([t1]), np.array([False]))[0]
    at[0] = published[target[0]] + int(rng.random() * (t1 - published[target[0]]))
    return dict(n=n, kind=kind, target=target, at=at, repeats=repeats)


def _domain_codes(names, risk: dict[str, str]) -> np.ndarray:
    """Per name, the index in ``S.RISK_DOMAINS`` of its ``risk`` domain, -1 where it has none."""
    return np.array([S.RISK_DOMAINS.index(risk[n]) if risk.get(n) else -1 for n in names])


def _risk_domains(template: np.ndarray, src: dict, target: np.ndarray,
                  symptom: np.ndarray) -> np.ndarray:
    """Per intent, the index in ``S.RISK_DOMAINS`` of what its text names, -1 where none: the
    service (``V.SERVICE_RISK``), else the operation (``V.OPERATION_RISK``), else the symptom
    (``V.SYMPTOM_RISK``), each only where the intent's template names it."""
    text = template.astype(str)
    service, operation = src["service"][target], src["operation"][target]
    by = [(np.char.find(text, "{service}") >= 0, _domain_codes(V.SERVICES, V.SERVICE_RISK)[
              service]),
          (np.char.find(text, "{op_") >= 0, _domain_codes([o[0] for o in V.OPERATIONS],
                                                           V.OPERATION_RISK)[operation]),
          (np.char.find(text, "{symptom_") >= 0, _domain_codes(V.SYMPTOM_NAMES,
                                                                V.SYMPTOM_RISK)[symptom])]
    return np.select([named & (code >= 0) for named, code in by], [code for _, code in by], -1)


def _multi_intent(rng: np.random.Generator, intents: dict, text: np.ndarray,
                  domain: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A ``V.MULTI_INTENT_SHARE`` of the plain answerable intents ask a second thing
    (``V.SECOND_REQUESTS``) after ``V.MULTI_INTENT_JOIN``: each intent's text, its risk domain
    (the request's where the first names none) and whether it asks a second thing."""
    plain = (intents["kind"] == V.PLAIN) & (intents["target"] >= 0)
    asked = plain & (rng.random(intents["n"]) < V.MULTI_INTENT_SHARE)
    request = rng.integers(len(V.SECOND_REQUESTS), size=intents["n"])[asked]
    risk = dict(V.SECOND_REQUESTS)
    text, domain = text.copy(), domain.copy()
    text[asked] = text[asked] + V.MULTI_INTENT_JOIN + _column(V.SECOND_REQUESTS, request, 0)
    domain[asked] = np.where(domain[asked] >= 0, domain[asked],
                             _domain_codes(risk, risk)[request])
    return text, domain, asked


def _query_text(rng: np.random.Generator, src: dict,
                intents: dict) -> tuple[np.ndarray, np.ndarray]:
    """The text of each intent, from its kind's templates and its target article, and the
    risk domain it names (``_risk_domains``)."""
    n, kind, target = intents["n"], intents["kind"], intents["target"]
    t = np.maximum(target, 0)
    template = _column(V.PLAIN_QUERY, src["kind"][t])  # plain, typo, authz_boundary
    for k, choices in V.QUERY_TEMPLATES.items():
        rows = np.flatnonzero(kind == k)
        template[rows] = _column(choices, rng.integers(len(choices), size=len(rows)))
    template[0] = "{service} {op_title}"  # the guest's runbook question (intent 0)
    negation = np.flatnonzero(kind == V.NEGATION)
    template[negation] = np.array([p[1] for p in V.PROCEDURES], dtype=object)[
        src["proc"][t[negation]], rng.integers(2, size=len(negation))]

    attr = (src["attr_offset"][t] + src["answer"][t]) % len(V.SPEC_ATTRS)
    symptom = np.where(target >= 0, src["symptom"][t], rng.integers(len(V.SYMPTOMS), size=n))
    fields = dict(
        model=src["model"][t], code=src["code"][t], symptom_kw=_column(V.SYMPTOMS, symptom, 2),
        symptom_c=_column(V.SYMPTOMS, symptom, 3),
        family_c=_column(V.FAMILIES, src["family"][t], 1),
        attr_kw=_column(V.SPEC_ATTRS, attr, 1), unit=_column(V.SPEC_ATTRS, attr, 2),
        value=_text(src["values"][t, attr]),
        proc_kw=_howto(0)[src["proc"][t] * 2 + src["variant"][t]],
        service=_column(V.SERVICES, src["service"][t]),
        op_kw=_column(V.OPERATIONS, src["operation"][t], 1),
        op_title=_column(V.OPERATIONS, src["operation"][t], 0),
        absent=_column(V.ABSENT_TOPICS, rng.integers(len(V.ABSENT_TOPICS), size=n)),
        absent_model=V.ABSENT_PREFIX + "-" + _text(rng.integers(100, 1000, size=n)))
    text = _fill(template, fields)
    typo = np.flatnonzero(kind == V.TYPO)
    text[typo] = _misspell(rng, text[typo])
    return text, _risk_domains(template, src, t, symptom)


def _queries(rng: np.random.Generator, src: dict, n_queries: int, names: np.ndarray,
             t0: int, t1: int, risk_rng: np.random.Generator) -> tuple[pd.DataFrame, np.ndarray]:
    """The query log (sorted by issued_at) and each row's target article (-1: none);
    ``risk_rng`` draws the second requests of multi-intent queries."""
    intents = _intents(rng, src, n_queries, t0, t1)
    text, domain, multi = _multi_intent(risk_rng, intents, *_query_text(rng, src, intents))
    of = np.repeat(np.arange(intents["n"]), intents["repeats"])
    repeats, target, kind = intents["repeats"][of], intents["target"][of], intents["kind"][of]
    first = np.arange(len(of)) == (np.cumsum(intents["repeats"]) - intents["repeats"])[of]
    at = intents["at"][of]
    issued = np.where(first, at, at + (rng.random(len(of)) * (t1 - at)).astype(np.int64))

    tenant_p = 1 / np.arange(1, len(names) + 1)
    intent_tenant = np.where(intents["target"] >= 0, src["tenant"][np.maximum(
        intents["target"], 0)], rng.choice(len(names), intents["n"], p=tenant_p / tenant_p.sum()))
    tenant = intent_tenant[of]
    acl = np.where(target >= 0, src["acl"][np.maximum(target, 0)], V.OPEN)
    u = rng.random(len(of))
    authz = kind == V.AUTHZ
    role = np.select(
        [authz & (acl == V.STAFF), authz, acl == V.STAFF, acl == V.ADMIN],
        [V.GUEST, np.where(u < 0.5, V.GUEST, V.EMPLOYEE),
         np.where(u < 0.85, V.EMPLOYEE, V.ADMIN_ROLE), V.ADMIN_ROLE],
        np.searchsorted(np.cumsum(V.ROLE_SHARES), u * 0.999999))

    users = _users(rng, n_queries, names)
    order = np.lexsort((users["role"], users["tenant"]))
    keys = (users["tenant"] * len(S.ROLES) + users["role"])[order]
    key = tenant * len(S.ROLES) + role
    lo, hi = np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right")
    user = order[lo + (rng.random(len(of)) * (hi - lo)).astype(int)]

    head = repeats > 1
    kinds = [[k] if k != "plain" else [] for k in V.QUERY_KINDS]
    risks = [[], *([S.HIGH_RISK_TAG, d] for d in S.RISK_DOMAINS)]
    tag_lists = [[h, *k, *r, *m] for h in ("tail", "head") for k in kinds for r in risks
                 for m in ([], [S.MULTI_INTENT_TAG])]
    tag_code = (((head * len(kinds) + kind) * len(risks) + domain[of] + 1) * 2
                + multi[of])
    weight = np.where(head, repeats * rng.uniform(0.8, 1.2, len(of)),
                      rng.uniform(0.2, 1.0, len(of))).round(3)
    queries = pd.DataFrame({
        S.QUERY_ID: _strings("q" + _text(np.arange(len(of)), 6)),
        S.TEXT: _strings(text[of]), S.ISSUED_AT: _utc(issued),
        S.USER_ID: _strings(users["user_id"][user]), S.TENANT: _strings(names[tenant]),
        S.GROUPS: [list(users["groups"][i]) for i in user],
        S.ROLE: _strings(np.array(S.ROLES)[role]),
        S.TAGS: [list(tag_lists[i]) for i in tag_code], S.WEIGHT: weight,
        S.QUERY_SOURCE: _strings(np.where(np.isin(kind, V.TEMPLATE_KINDS), S.TEMPLATE,
                                          S.LOGGED))})
    order = np.argsort(issued, kind="stable")
    return queries.iloc[order].reset_index(drop=True), target[order]


def _part(rows: np.ndarray, chunks: np.ndarray, grade, hard=False) -> tuple:
    """Ground-truth rows of one kind: query rows, chunks, grades and hard-negative marks."""
    return rows, chunks, np.broadcast_to(grade, len(rows)), np.broadcast_to(hard, len(rows))


def _ground_truth(src: dict, query_ids: pd.Series, target: np.ndarray, doc_id: np.ndarray,
                  duplicate: np.ndarray) -> pd.DataFrame:
    """Graded relevance of each query row with a target article, and its hard negatives (see
    the module docstring); ``duplicate``: per article, the chunk of its near-duplicate (-1:
    none)."""
    tenant, kind, runbook = src["tenant"], src["kind"], src["kind"] == V.RUNBOOK
    acl = np.where(runbook, src["acl"], 0)
    topic = np.where(runbook, src["service"], src["model_index"])
    rel_prev, rel_next = _neighbours(np.stack([tenant, runbook, topic, acl], 1))
    near_key = np.select([kind == V.TROUBLE, kind == V.SPEC, kind == V.HOWTO],
                         [src["symptom"], src["family"], src["pair"]], src["operation"])
    prev, nxt = _neighbours(np.stack([tenant, kind, near_key, acl], 1))
    near = np.where(prev >= 0, prev, nxt)
    answer_chunk = src["first"] + src["answer"]

    rows = np.flatnonzero(target >= 0)
    t = target[rows]
    reps = src["n_chunks"][t]
    offset = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    grades = np.where(offset == np.repeat(src["answer"][t], reps), 3, 2)
    parts = [_part(np.repeat(rows, reps), np.repeat(src["first"][t], reps) + offset, grades)]
    for related in (rel_prev[t], rel_next[t]):
        ok = (related >= 0) & (related != near[t])
        parts.append(_part(rows[ok], answer_chunk[related[ok]], 1))
    ok = near[t] >= 0
    close = (kind[t] == V.HOWTO) | (topic[near[t]] != topic[t])  # the twin, another topic
    parts.append(_part(rows[ok], answer_chunk[near[t][ok]], 0, close[ok]))
    ok = duplicate[t] >= 0
    parts.append(_part(rows[ok], duplicate[t][ok], 0, True))
    row, chunk, grade, hard = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.lexsort((chunk, -grade, row))
    return pd.DataFrame({S.QUERY_ID: _strings(query_ids.to_numpy()[row[order]]),
                         S.DOC_ID: _strings(doc_id[chunk[order]]),
                         S.GRADE: grade[order].astype(np.int64), S.HARD_NEGATIVE: hard[order]})


def _must_not_return(documents: pd.DataFrame, queries: pd.DataFrame,
                     truth: pd.DataFrame) -> pd.DataFrame:
    """The ground-truth documents of each ``authz_boundary`` query that it may not see, with
    the reason (module docstring)."""
    tags = queries[S.TAGS].explode()
    authz = queries[S.QUERY_ID].isin(queries.loc[tags.index[tags == V.AUTHZ_TAG], S.QUERY_ID])
    pairs = truth.loc[truth[S.QUERY_ID].isin(queries.loc[authz, S.QUERY_ID]),
                      [S.QUERY_ID, S.DOC_ID]]
    why = forbidden_reasons(pairs, queries[authz], documents)
    hidden = pairs[why != ""].reset_index(drop=True)
    acl = hidden[S.DOC_ID].map(documents.set_index(S.DOC_ID)[S.ACL])
    reason = [f"restricted answer: {', '.join(groups)} only" if len(groups)
              else f"restricted answer: not visible ({rule})"
              for groups, rule in zip(acl, why[why != ""], strict=True)]
    return pd.DataFrame({S.QUERY_ID: _strings(hidden[S.QUERY_ID]),
                         S.DOC_ID: _strings(hidden[S.DOC_ID]), S.REASON: _strings(reason)})


def generate(n_docs: int = 5000, n_queries: int = 1000, seed: int = 0, start: str = "2025-01-01",
             months: int = 12, tenants: int = 2,
             near_duplicates: float = V.NEAR_DUPLICATE_SHARE) -> DemoData:
    """A demo knowledge base of ``n_docs`` chunks, plus a near-duplicate note for a
    ``near_duplicates`` share of the troubleshooting articles, a log of ``n_queries`` queries
    and their ground truth, published and issued over ``months`` months from ``start`` (UTC),
    split over ``tenants`` tenants. Deterministic in all arguments; see the module docstring.

    Needs n_docs ≥ 50, n_queries ≥ 20 (so every kind of article and query occurs),
    months ≥ 1, 1 ≤ tenants ≤ 8 and 0 ≤ near_duplicates ≤ 1; raises ValueError otherwise.
    """
    if n_docs < MIN_DOCS or n_queries < MIN_QUERIES or months < 1 \
            or not 1 <= tenants <= len(V.TENANT_NAMES) or not 0 <= near_duplicates <= 1:
        raise ValueError(f"need n_docs >= {MIN_DOCS}, n_queries >= {MIN_QUERIES}, months >= 1, "
                         f"1 <= tenants <= {len(V.TENANT_NAMES)} and 0 <= near_duplicates <= 1; "
                         f"got {n_docs}, {n_queries}, {months}, {tenants}, {near_duplicates}")
    rng = np.random.default_rng(seed)
    begin = pd.Timestamp(start)
    begin = begin.tz_localize("UTC") if begin.tzinfo is None else begin.tz_convert("UTC")
    t0, t1 = int(begin.timestamp()), int((begin + pd.DateOffset(months=months)).timestamp())
    names = np.array(V.TENANT_NAMES[:tenants], dtype=object)
    src = _sources(rng, n_docs, tenants, t0, t1)
    documents, doc_id = _documents(src, names)
    queries, target = _queries(rng, src, n_queries, names, t0, t1,
                               np.random.default_rng([seed, 1]))
    dup = _near_duplicates(rng, src, near_duplicates)  # drawn last: the rest is as without
    near, near_id = _duplicate_documents(src, dup, documents, names)
    duplicate = np.full(src["n"], -1)
    duplicate[dup["of"]] = len(doc_id) + np.arange(len(near_id))
    documents = pd.concat([documents, near], ignore_index=True)
    truth = _ground_truth(src, queries[S.QUERY_ID], target, np.concatenate([doc_id, near_id]),
                          duplicate)
    return DemoData(documents, queries, truth, _must_not_return(documents, queries, truth))
