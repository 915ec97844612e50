import io
import re
import time

import numpy as np
import pandas as pd
import pytest

from releval.data import contracts as S
from releval.data.visibility import forbidden_reasons
from releval.demo import generator as D
from releval.demo import vocabulary as V

STOPWORDS = set("a an the my i do what how any idea to fix is of on in it's its and again at all "
                "not no without but up".split())
CODE = re.compile(r"\b[A-Z]-\d{4}\b")


def words(text: str) -> set[str]:
    """Lower-case content words (model numbers and codes stay whole)."""
    return set(re.findall(r"[a-z0-9°]+(?:[-'][a-z0-9]+)*", text.lower())) - STOPWORDS


N_DOCS = 3000


@pytest.fixture(scope="module")
def demo() -> D.DemoData:
    return D.generate(n_docs=N_DOCS, n_queries=800, seed=7)


@pytest.fixture(scope="module")
def plain() -> D.DemoData:
    """The same data without near-duplicates."""
    return D.generate(n_docs=N_DOCS, n_queries=800, seed=7, near_duplicates=0)


@pytest.fixture(scope="module")
def judged(demo) -> pd.DataFrame:
    """Ground truth joined with its documents and queries (query columns suffixed _q)."""
    return (demo.ground_truth.merge(demo.documents, on=S.DOC_ID, validate="many_to_one")
            .merge(demo.queries, on=S.QUERY_ID, suffixes=("", "_q"), validate="many_to_one"))


def tagged(frame: pd.DataFrame, tag: str, column: str = S.TAGS) -> pd.DataFrame:
    return frame[frame[column].map(lambda tags: tag in tags)]


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


def test_same_seed_gives_identical_parquet_and_another_seed_differs():
    a, b, c = (D.generate(n_docs=800, n_queries=150, seed=s) for s in (3, 3, 4))
    for name in ("documents", "queries", "ground_truth"):
        assert parquet_bytes(getattr(a, name)) == parquet_bytes(getattr(b, name))
        assert parquet_bytes(getattr(a, name)) != parquet_bytes(getattr(c, name))


def test_contract_columns_and_dtypes(demo):
    docs, queries, truth = demo.documents, demo.queries, demo.ground_truth
    assert tuple(docs.columns) == S.DOCUMENT_COLUMNS and len(docs) > N_DOCS
    assert tuple(queries.columns) == (*S.QUERY_COLUMNS, S.QUERY_SOURCE) and len(queries) == 800
    assert tuple(truth.columns) == (*S.QRELS_COLUMNS, S.HARD_NEGATIVE)
    for frame, columns in ((docs, (S.DOC_ID, S.TITLE, S.TEXT, S.SOURCE_ID, S.STATUS, S.TENANT)),
                           (queries, (S.QUERY_ID, S.TEXT, S.USER_ID, S.TENANT, S.ROLE,
                                      S.QUERY_SOURCE)),
                           (truth, (S.QUERY_ID, S.DOC_ID))):
        for column in columns:
            assert pd.api.types.is_string_dtype(frame[column]), column
            assert frame[column].notna().all() and (frame[column] != "").all(), column
    for column in (docs[S.PUBLISHED_AT], docs[S.DELETED_AT], queries[S.ISSUED_AT]):
        assert str(column.dt.tz) == "UTC"
    for column in (docs[S.ACL], queries[S.GROUPS], queries[S.TAGS]):
        assert column.map(lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)
                          ).all()
    assert queries[S.WEIGHT].dtype == np.float64 and (queries[S.WEIGHT] >= 0).all()
    assert truth[S.GRADE].dtype == np.int64 and truth[S.GRADE].between(0, 3).all()
    assert truth[S.HARD_NEGATIVE].dtype == bool
    assert set(docs[S.STATUS]) == set(S.STATUSES) and (docs[S.STATUS] == "published").mean() > 0.8
    assert set(queries[S.ROLE]) == set(S.ROLES)
    assert set(queries[S.TAGS].explode()) == set(S.TAG_VALUES)
    assert set(queries[S.QUERY_SOURCE]) == set(S.QUERY_SOURCES)


def test_keys_are_unique_and_ground_truth_refers_to_known_rows(demo):
    assert demo.documents[S.DOC_ID].is_unique and demo.queries[S.QUERY_ID].is_unique
    truth = demo.ground_truth
    assert not truth.duplicated([S.QUERY_ID, S.DOC_ID]).any()
    assert truth[S.DOC_ID].isin(demo.documents[S.DOC_ID]).all()
    assert truth[S.QUERY_ID].isin(demo.queries[S.QUERY_ID]).all()


def test_deletions_and_time_window(demo):
    docs = demo.documents
    deleted = docs[S.STATUS] == "deleted"
    assert docs.loc[deleted, S.DELETED_AT].notna().all()
    assert docs.loc[~deleted, S.DELETED_AT].isna().all()
    assert (docs.loc[deleted, S.DELETED_AT] >= docs.loc[deleted, S.PUBLISHED_AT]).all()
    start, end = pd.Timestamp("2025-01-01", tz="UTC"), pd.Timestamp("2026-01-01", tz="UTC")
    for times in (docs[S.PUBLISHED_AT], demo.queries[S.ISSUED_AT]):
        assert times.between(start, end, inclusive="left").all()
        assert times.max() - times.min() > pd.Timedelta(days=300)  # spread over the year
    assert demo.queries[S.ISSUED_AT].is_monotonic_increasing


def test_chunks_share_their_source(demo):
    docs = demo.documents
    sizes = docs.groupby(S.SOURCE_ID).size()
    assert (sizes > 1).mean() > 0.6 and sizes.max() <= V.MAX_CHUNKS
    assert (docs[S.DOC_ID].str.split("#").str[0] == docs[S.SOURCE_ID]).all()
    per_source = docs.groupby(S.SOURCE_ID)[[S.TITLE, S.TENANT, S.STATUS]].nunique()
    assert (per_source == 1).all().all()


def test_tenants_roles_groups_and_acls(demo):
    docs, queries = demo.documents, demo.queries
    assert docs[S.TENANT].nunique() == 2 and queries[S.TENANT].nunique() == 2
    assert set(docs[S.ACL].map(tuple)) == {(), ("staff",), ("admin",)}
    groups = queries.groupby(S.ROLE)[S.GROUPS].agg(lambda g: {tuple(x) for x in g})
    assert groups["guest"] == {("public",)} and groups["admin"] == {("staff", "admin")}
    assert all(g[0] == "staff" and len(g) == 2 for g in groups["employee"])


def test_head_queries_repeat_with_higher_weight_than_tail(demo):
    queries = demo.queries
    head, tail = tagged(queries, "head"), tagged(queries, "tail")
    assert len(head) + len(tail) == len(queries) and 0.2 < len(head) / len(queries) < 0.4
    repeats = head.groupby(S.TEXT).agg(n=(S.QUERY_ID, "size"), users=(S.USER_ID, "nunique"),
                                       times=(S.ISSUED_AT, "nunique"))
    assert (repeats.n >= 2).all() and (repeats.times == repeats.n).all()
    assert (repeats.users > 1).mean() > 0.9
    assert head[S.WEIGHT].min() > tail[S.WEIGHT].max()


def test_answered_queries_have_one_answer_mostly_published_before_the_query(demo, judged):
    answers = judged[judged[S.GRADE] == 3]
    assert answers[S.QUERY_ID].is_unique
    unanswered = set(demo.queries[S.QUERY_ID]) - set(answers[S.QUERY_ID])
    assert unanswered == set(tagged(demo.queries, "no_answer")[S.QUERY_ID])
    on_time = answers[S.PUBLISHED_AT] <= answers[S.ISSUED_AT]
    assert 0.9 < on_time.mean() < 1.0
    assert (answers[S.TENANT] == answers[f"{S.TENANT}_q"]).all()


def test_guest_asking_for_an_internal_runbook(demo, judged):
    query = demo.queries.set_index(S.QUERY_ID).loc[D.GUEST_RUNBOOK_QUERY_ID]
    assert query[S.ROLE] == "guest" and query[S.GROUPS] == ["public"]
    assert "authz_boundary" in query[S.TAGS]
    truth = judged[judged[S.QUERY_ID] == D.GUEST_RUNBOOK_QUERY_ID]
    assert (truth[S.GRADE] == 3).sum() == 1 and len(truth) >= 2
    assert truth[S.ACL].map(lambda acl: acl == ["staff"]).all()
    assert truth[S.TITLE].str.startswith("Runbook:").all()
    answer = truth[truth[S.GRADE] == 3].iloc[0]
    assert answer[S.PUBLISHED_AT] <= query[S.ISSUED_AT] and answer[S.STATUS] == "published"


def test_authz_boundary_users_may_not_see_the_answer(judged):
    answers = tagged(judged[judged[S.GRADE] == 3], "authz_boundary")
    assert len(answers) > 20 and (answers[S.ROLE] != "admin").all()
    for acl, groups in zip(answers[S.ACL], answers[S.GROUPS], strict=True):
        assert acl and not set(acl) & set(groups)
    others = judged[(judged[S.GRADE] == 3)
                    & judged[S.TAGS].map(lambda t: "authz_boundary" not in t)]
    visible = [not acl or role == "admin" or bool(set(acl) & set(groups)) for acl, groups, role
               in zip(others[S.ACL], others[S.GROUPS], others[S.ROLE], strict=True)]
    assert all(visible)


def test_error_code_queries_quote_a_code_of_their_answer(judged):
    answers = tagged(judged[judged[S.GRADE] == 3], "error_code")
    assert len(answers) > 50
    for query, text in zip(answers["text_q"], answers[S.TEXT], strict=True):
        codes = CODE.findall(query)
        assert codes and all(code in text for code in codes), query


def test_numeric_queries_quote_the_model_number_of_their_answer(judged):
    answers = tagged(judged[judged[S.GRADE] == 3], "numeric")
    assert len(answers) > 30
    for query, text in zip(answers["text_q"], answers[S.TEXT], strict=True):
        model = re.search(r"\b[A-Z]{2}-\d{3}\b", query).group()
        assert model in text and re.search(r"\d+ ", text), query


def test_paraphrases_share_few_words_with_their_answer_unlike_keyword_queries(judged):
    answers = judged[judged[S.GRADE] == 3]

    def overlap(tag):
        rows = tagged(answers, tag)
        return np.array([len(words(q) & words(f"{title} {text}")) / len(words(q)) for q, title, text
                         in zip(rows["text_q"], rows[S.TITLE], rows[S.TEXT], strict=True)])

    paraphrase, error_code = overlap("paraphrase"), overlap("error_code")
    assert len(paraphrase) > 50
    assert paraphrase.mean() < 0.05 and paraphrase.max() <= 0.2
    assert error_code.mean() > 0.5


def test_typos_misspell_a_word_no_document_uses(demo):
    vocabulary = set().union(*map(words, demo.documents[S.TITLE] + " " + demo.documents[S.TEXT]))
    typos = tagged(demo.queries, "typo")[S.TEXT]
    assert len(typos) > 30
    assert all(words(text) - vocabulary for text in typos)


def test_negation_queries_have_their_negated_twin_judged_not_relevant(judged):
    rows = tagged(judged, "negation")
    assert rows["text_q"].str.contains(r"\b(?:without|not)\b").all()
    grades = rows.groupby(S.QUERY_ID)[S.GRADE].agg(set)
    assert len(grades) > 20 and grades.map(lambda g: {0, 3} <= g).all()
    twins = rows[rows[S.GRADE].isin([0, 3])].groupby(S.QUERY_ID)[S.SOURCE_ID].nunique()
    assert (twins == 2).all()


def test_grades_cover_answer_chunk_siblings_related_and_near_misses(demo, judged):
    counts = demo.ground_truth[S.GRADE].value_counts()
    assert set(counts.index) == {0, 1, 2, 3}
    answers = judged[judged[S.GRADE] == 3].set_index(S.QUERY_ID)[S.SOURCE_ID]
    siblings = judged[judged[S.GRADE] == 2]
    assert (siblings[S.SOURCE_ID].to_numpy() == answers[siblings[S.QUERY_ID]].to_numpy()).all()


def test_default_size_is_fast_and_20k_documents_scale():
    started = time.perf_counter()
    D.generate()
    assert time.perf_counter() - started < 5
    started = time.perf_counter()
    big = D.generate(n_docs=20_000, n_queries=2_000, seed=1, tenants=3)
    assert time.perf_counter() - started < 10
    assert len(big.documents) > 20_000 and big.documents[S.DOC_ID].is_unique
    assert big.documents[S.TENANT].nunique() == 3 and len(big.queries) == 2_000


@pytest.mark.parametrize("seed", range(5))
def test_smallest_size_still_has_every_tag_role_and_the_guest_case(seed):
    demo = D.generate(n_docs=D.MIN_DOCS, n_queries=D.MIN_QUERIES, seed=seed, months=1)
    assert len(demo.documents) >= D.MIN_DOCS and len(demo.queries) == D.MIN_QUERIES
    kinds = {"head", "tail", *V.QUERY_KINDS} - {"plain"}
    assert kinds <= set(demo.queries[S.TAGS].explode()) <= set(S.TAG_VALUES)
    truth = demo.ground_truth.merge(demo.documents, on=S.DOC_ID)
    guest = truth[truth[S.QUERY_ID] == D.GUEST_RUNBOOK_QUERY_ID]
    assert (guest[S.GRADE] == 3).sum() == 1 and guest[S.ACL].map(lambda a: a == ["staff"]).all()


@pytest.mark.parametrize("kwargs", [dict(n_docs=D.MIN_DOCS - 1), dict(n_queries=D.MIN_QUERIES - 1),
                                    dict(months=0), dict(tenants=0), dict(tenants=99),
                                    dict(near_duplicates=-0.1), dict(near_duplicates=1.5)])
def test_too_small_or_bad_parameters_are_rejected(kwargs):
    with pytest.raises(ValueError, match="need n_docs"):
        D.generate(**kwargs)


def test_must_not_return_lists_every_hidden_answer_of_authz_queries(demo):
    banned = demo.must_not_return
    assert tuple(banned.columns) == S.MUST_NOT_RETURN_COLUMNS and len(banned)
    for column in S.MUST_NOT_RETURN_COLUMNS:
        assert pd.api.types.is_string_dtype(banned[column]), column
    assert not banned.duplicated([S.QUERY_ID, S.DOC_ID]).any()
    authz = tagged(demo.queries, "authz_boundary")
    truth = demo.ground_truth[demo.ground_truth[S.QUERY_ID].isin(authz[S.QUERY_ID])]
    hidden = truth[forbidden_reasons(truth, demo.queries, demo.documents) != ""]
    key = [S.QUERY_ID, S.DOC_ID]
    assert set(map(tuple, banned[key].to_numpy())) == set(map(tuple, hidden[key].to_numpy()))
    assert (forbidden_reasons(banned, demo.queries, demo.documents) != "").all()  # none visible
    assert banned[S.QUERY_ID].isin(authz[S.QUERY_ID]).all()
    acl = banned[S.DOC_ID].map(demo.documents.set_index(S.DOC_ID)[S.ACL])
    restricted = acl.map(len) > 0
    assert restricted.mean() > 0.9
    assert (banned[S.REASON][restricted]
            == "restricted answer: " + acl[restricted].map(", ".join) + " only").all()
    assert banned[S.REASON][~restricted].str.startswith("restricted answer: not visible (").all()
    guest = banned[banned[S.QUERY_ID] == D.GUEST_RUNBOOK_QUERY_ID]
    guest_truth = demo.ground_truth[demo.ground_truth[S.QUERY_ID] == D.GUEST_RUNBOOK_QUERY_ID]
    assert set(guest[S.DOC_ID]) == set(guest_truth[S.DOC_ID])
    assert (guest[S.REASON] == "restricted answer: staff only").all()


def test_must_not_return_is_deterministic():
    a, b = (D.generate(n_docs=300, n_queries=60, seed=2) for _ in range(2))
    assert parquet_bytes(a.must_not_return) == parquet_bytes(b.must_not_return)


# --- hard negatives -------------------------------------------------------------------------

MODEL = re.compile(r"\b[A-Z]{2}-\d{3}\b")


def test_near_duplicates_are_added_and_nothing_else_changes(demo, plain):
    assert len(plain.documents) == N_DOCS
    pd.testing.assert_frame_equal(demo.documents.iloc[:N_DOCS], plain.documents)
    pd.testing.assert_frame_equal(demo.queries, plain.queries)
    key = [S.QUERY_ID, S.DOC_ID]
    near = demo.documents[S.DOC_ID].iloc[N_DOCS:]
    kept = demo.ground_truth[~demo.ground_truth[S.DOC_ID].isin(near)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, plain.ground_truth)
    assert demo.ground_truth[key].merge(plain.ground_truth[key]).shape[0] == len(plain.ground_truth)


def test_a_near_duplicate_is_its_answers_copy_with_a_wrong_model_number(demo, judged):
    docs = demo.documents
    near, articles = docs.iloc[N_DOCS:], docs.iloc[:N_DOCS]
    trouble = articles[articles[S.TITLE].str.contains(": ")].drop_duplicates(S.SOURCE_ID)
    assert 0.05 < len(near) / len(trouble) < 0.15  # V.NEAR_DUPLICATE_SHARE of them
    assert near[S.DOC_ID].str.endswith("#0").all() and near[S.SOURCE_ID].is_unique
    assert not near[S.SOURCE_ID].isin(articles[S.SOURCE_ID]).any()
    models = set(articles[S.TITLE].str.extract(r"^([A-Z]{2}-\d{3}) ", expand=False).dropna())
    codes = set(articles[S.TEXT].str.findall(CODE).explode().dropna())
    assert not set(near[S.TITLE].str[:6]) & models
    # judged near-duplicates: grade 0 and marked for the queries of the answer they copy
    rows = judged[judged[S.DOC_ID].isin(near[S.DOC_ID])]
    assert rows[S.DOC_ID].nunique() > 10
    assert (rows[S.GRADE] == 0).all() and rows[S.HARD_NEGATIVE].all()
    answers = judged[judged[S.GRADE] == 3].set_index(S.QUERY_ID)
    wrong_code = []
    for _, copy in rows.drop_duplicates(S.DOC_ID).iterrows():
        answer = answers.loc[copy[S.QUERY_ID]]
        model, right = MODEL.search(copy[S.TITLE]).group(), MODEL.search(answer[S.TITLE]).group()
        (code,), (own,) = CODE.findall(copy[S.TEXT]), CODE.findall(answer[S.TEXT])
        assert model[:3] == right[:3] and model != right  # same prefix, wrong number
        assert copy[S.TITLE] == answer[S.TITLE].replace(right, model)
        assert copy[S.TEXT] == answer[S.TEXT].replace(right, model).replace(own, code)
        assert code == own or (code[0] == own[0] and code not in codes)
        for column in (S.PUBLISHED_AT, S.STATUS, S.TENANT, S.ACL):
            assert copy[column] == answer[column], column
        wrong_code.append(code != own)
    assert 0.2 < np.mean(wrong_code) < 0.8  # V.WRONG_CODE_SHARE
    # every query of a copied answer has the copy judged
    copied = answers[answers[S.DOC_ID].isin(answers.loc[rows[S.QUERY_ID], S.DOC_ID])]
    assert set(copied.index) == set(rows[S.QUERY_ID])


def topic(title: str) -> str:
    """What an article is about: its runbook's service, else its model number."""
    if title.startswith("Runbook: "):
        return next(service for service in V.SERVICES if service in title)
    return MODEL.search(title).group()


def test_hard_negatives_are_the_deliberately_close_near_misses(demo, judged):
    truth = demo.ground_truth
    assert (truth.loc[truth[S.HARD_NEGATIVE], S.GRADE] == 0).all()
    misses = judged[(judged[S.GRADE] == 0)
                    & judged[S.DOC_ID].isin(demo.documents[S.DOC_ID].iloc[:N_DOCS])]
    assert 0.8 < misses[S.HARD_NEGATIVE].mean() < 1  # most near misses are close, not all
    twins = tagged(misses, "negation")
    assert len(twins) > 20 and twins[S.HARD_NEGATIVE].all()  # the negated twin
    answer = judged[judged[S.GRADE] == 3].set_index(S.QUERY_ID)[S.TITLE]
    howto = re.compile(r"^(?!Runbook: |[A-Z]{2}-\d{3} )")  # titles not led by a model number
    expected = [bool(howto.match(a)) or topic(m) != topic(a) for m, a in zip(
        misses[S.TITLE], answer[misses[S.QUERY_ID]], strict=True)]
    assert misses[S.HARD_NEGATIVE].tolist() == expected


# --- sampling source and risk tags ----------------------------------------------------------


def test_template_probes_are_the_error_code_authz_and_no_answer_queries(demo):
    queries = demo.queries
    probe = queries[S.TAGS].map(lambda t: bool({"error_code", "authz_boundary", "no_answer"}
                                               & set(t)))
    assert (queries[S.QUERY_SOURCE] == np.where(probe, "template", "logged")).all()
    assert 0.2 < probe.mean() < 0.5
    for source, rows in queries.groupby(S.QUERY_SOURCE):  # weight: traffic, alike for both
        head = rows[S.TAGS].map(lambda t: "head" in t)
        assert rows.loc[head, S.WEIGHT].min() > 1 >= rows.loc[~head, S.WEIGHT].max(), source


def test_high_risk_queries_carry_one_domain_named_by_their_text(demo):
    queries = demo.queries
    risky = tagged(queries, S.HIGH_RISK_TAG)
    assert 0.05 < len(risky) / len(queries) < 0.3
    domains = risky[S.TAGS].map(lambda t: [d for d in S.RISK_DOMAINS if d in t])
    assert (domains.map(len) == 1).all() and set(domains.str[0]) == set(S.RISK_DOMAINS)
    others = queries.drop(risky.index)[S.TAGS]
    assert not others.map(lambda t: bool(set(S.RISK_DOMAINS) & set(t))).any()
    names = {d: [*(k for k, v in {**V.SERVICE_RISK, **V.OPERATION_RISK}.items() if v == d),
                 *(r for r, v in V.SECOND_REQUESTS if v == d)] for d in S.RISK_DOMAINS}
    names["safety"] += ["overheating", "gets really hot"]  # the heat symptom's words
    for text, domain, tags in zip(risky[S.TEXT], domains.str[0], risky[S.TAGS], strict=True):
        assert any(n in text for n in names[domain]) or "typo" in tags, text  # or misspelt
    finance = queries[queries[S.TEXT].str.contains("billing database|payroll export job")]
    assert len(finance) and finance[S.TAGS].map(lambda t: "finance" in t).all()


def test_multi_intent_queries_ask_a_second_thing_no_document_answers(demo, judged):
    multi = tagged(demo.queries, S.MULTI_INTENT_TAG)
    assert 0.03 < len(multi) / len(demo.queries) < 0.15
    first, _, second = multi[S.TEXT].str.partition(V.MULTI_INTENT_JOIN).T.to_numpy()
    assert set(second) <= {r for r, _ in V.SECOND_REQUESTS} and (first != "").all()
    vocabulary = set().union(*map(words, demo.documents[S.TITLE] + " " + demo.documents[S.TEXT]))
    assert not set().union(*map(words, second)) & vocabulary
    # plain queries: no kind tag, and an answer as any plain query has
    assert multi[S.TAGS].map(lambda t: not set(t) & set(V.QUERY_KINDS)).all()
    assert multi[S.QUERY_ID].isin(judged.loc[judged[S.GRADE] == 3, S.QUERY_ID]).all()
    others = demo.queries.drop(multi.index)
    assert not others[S.TEXT].str.contains(V.MULTI_INTENT_JOIN).any()


def test_second_requests_change_nothing_but_their_queries_text_and_tags(demo, monkeypatch):
    """They are drawn from a stream of their own: without them every other figure is equal."""
    monkeypatch.setattr(V, "MULTI_INTENT_SHARE", 0.0)
    single = D.generate(n_docs=N_DOCS, n_queries=800, seed=7)
    for name in ("documents", "ground_truth", "must_not_return"):
        pd.testing.assert_frame_equal(getattr(demo, name), getattr(single, name))
    changed = [S.TEXT, S.TAGS]
    pd.testing.assert_frame_equal(demo.queries.drop(columns=changed),
                                  single.queries.drop(columns=changed))
    multi = demo.queries[S.TAGS].map(lambda t: S.MULTI_INTENT_TAG in t)
    assert (demo.queries[S.TEXT].str.partition(V.MULTI_INTENT_JOIN)[0]
            == single.queries[S.TEXT]).all()
    assert demo.queries.loc[~multi, S.TAGS].equals(single.queries.loc[~multi, S.TAGS])
