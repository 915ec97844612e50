"""The data contracts (docs/architecture.md): every table's columns, and the rules that readers,
stages, routes and the Great Expectations suites hold tables to.

Readers tag a frame with ``attrs["source"]`` (its file) and ``attrs["unit"]`` (line or row) and
index it by that number, so a broken rule is one InputError naming the file, the row and the
rule.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from releval.errors import InputError

QUERY_ID = "query_id"
DOC_ID = "doc_id"
RANK = "rank"
SCORE = "score"
GRADE = "grade"
SYSTEM = "system"
ROUTE = "route"
MEASURE = "measure"
VALUE = "value"

RUN_COLUMNS = (SYSTEM, ROUTE, QUERY_ID, DOC_ID, RANK, SCORE)
SEED = "seed"  # the training seed of a run of a system trained with several (seeds.parquet)
LIST_KEY = [SYSTEM, QUERY_ID]  # one ranked list of a runs table
# a system's outcome per query (latency.parquet; an external run's optional column, one
# value per query): answered, failed, timed out, answered in part, or by a fallback
RUN_STATUS = "status"
RUN_STATUSES = ("ok", "error", "timeout", "partial", "fallback")
QRELS_COLUMNS = (QUERY_ID, DOC_ID, GRADE)
# optional qrels column: the judgment marks an explicit hard negative (judged not relevant,
# grade < rel, and deliberately close to a relevant document); absent means False
HARD_NEGATIVE = "hard_negative"
PER_QUERY_COLUMNS = (QUERY_ID, MEASURE, VALUE)

# documents
TITLE = "title"
TEXT = "text"
SOURCE_ID = "source_id"
PUBLISHED_AT = "published_at"
STATUS = "status"
DELETED_AT = "deleted_at"
TENANT = "tenant"
ACL = "acl"
DOCUMENT_COLUMNS = (DOC_ID, TITLE, TEXT, SOURCE_ID, PUBLISHED_AT, STATUS, DELETED_AT, TENANT, ACL)
STATUSES = ("published", "draft", "expired", "deleted")

# queries
ISSUED_AT = "issued_at"
USER_ID = "user_id"
GROUPS = "groups"
ROLE = "role"
TAGS = "tags"
WEIGHT = "weight"
QUERY_COLUMNS = (QUERY_ID, TEXT, ISSUED_AT, USER_ID, TENANT, GROUPS, ROLE, TAGS, WEIGHT)
ROLES = ("guest", "employee", "admin")
# risk tags: a high-risk query carries HIGH_RISK_TAG and its domain; a query asking for two
# things at once carries MULTI_INTENT_TAG (releval.data.query_set reads them)
HIGH_RISK_TAG = "high_risk"
RISK_DOMAINS = ("authorization", "finance", "medical", "safety")
MULTI_INTENT_TAG = "multi_intent"
TAG_VALUES = ("head", "tail", "no_answer", "authz_boundary", "typo", "error_code", "paraphrase",
              "numeric", "negation", HIGH_RISK_TAG, *RISK_DOMAINS, MULTI_INTENT_TAG)
# optional query column: how the query was sampled, one of QUERY_SOURCES ("logged": from
# traffic; "template": written to a template); without the column every query is logged
QUERY_SOURCE = "source"
QUERY_SOURCES = ("logged", "template")
LOGGED, TEMPLATE = QUERY_SOURCES

# recommendation mode: the interaction log, the item catalogue, and what user-queries carry
ITEM_ID = "item_id"
TIMESTAMP = "timestamp"
LABEL = "label"  # 1: a positive interaction (purchase), 0: a negative one (cancellation)
INTERACTION_COLUMNS = (USER_ID, ITEM_ID, TIMESTAMP, LABEL)  # + optional context columns
CATEGORY = "category"
FIRST_SEEN = "first_seen"
ITEM_COLUMNS = (ITEM_ID, TITLE)  # + optional category, first_seen
HISTORY = "history"  # a user-query's interactions before its cut
HELD_OUT = "held_out"  # the user is held out of every route's fitting data
PROBABILITY = "probability"  # optional run column: the system's P(relevant) for the pair
# further horizons of a recommendation run: one row per (horizon, user-query of that horizon),
# the doc_ids of its positives (maybe none)
HORIZON_DAYS, POSITIVES = "horizon_days", "positives"
HORIZON_COLUMNS = (HORIZON_DAYS, QUERY_ID, POSITIVES)

# logged bandit feedback (off-policy evaluation, releval.offpolicy): one row per impression,
# the item shown at a slate position in a context, its reward and the logging policy's
# propensity for that (item, position); other columns are context features (user_id optional)
CONTEXT_ID = "context_id"
POSITION = "position"
REWARD = "reward"
PROPENSITY = "propensity"
LOG_COLUMNS = (CONTEXT_ID, ITEM_ID, POSITION, REWARD, PROPENSITY, TIMESTAMP)
# a candidate policy as a table: its probability of each item at each position per context
POLICY_COLUMNS = (CONTEXT_ID, ITEM_ID, POSITION, PROBABILITY)


def feature_columns(log: pd.DataFrame) -> list[str]:
    """A logged-feedback table's context features: every column that is not a log column or
    the user id."""
    return [c for c in log.columns if c not in (*LOG_COLUMNS, USER_ID)]


# split
SPLIT = "split"
SPLITS = ("train", "validation", "test")

# must_not_return: pairs a policy forbids returning, whatever visibility says
REASON = "reason"
MUST_NOT_RETURN_COLUMNS = (QUERY_ID, DOC_ID, REASON)

# judgments (raw) and qrels provenance
ANNOTATOR = "annotator"
JUDGED_AT = "judged_at"
GUIDELINE = "guideline"

# answer map (answers.parquet): the document holding each query's answer, by source
ANSWER_COLUMNS = (QUERY_ID, SOURCE_ID, DOC_ID)

# deep window (failure analysis): each route's exact ranking, far deeper than its window
ROUTE_SYSTEM = "route_system"
DEEP_COLUMNS = (ROUTE_SYSTEM, QUERY_ID, DOC_ID, RANK)

# slice labels (labels.parquet): the slices each evaluated query belongs to
DIMENSION = "dimension"
SLICE = "slice"
ALL = "all"  # the dimension and slice of an overall row
LABEL_COLUMNS = (QUERY_ID, DIMENSION, SLICE)

# pool (pool.parquet): one row per pooled (query_id, doc_id), blind for judges
POOL_ID = "pool_id"
BLIND_ID = "blind_id"
SYSTEMS = "systems"
MIN_RANK = "min_rank"
ROUND = "round"
POOL_COLUMNS = (POOL_ID, QUERY_ID, DOC_ID, BLIND_ID, SYSTEMS, MIN_RANK, ROUND)

# accepted judgments (data/judgments/judgments.parquet): one grade per (pair, annotator)
RAW_JUDGMENT_COLUMNS = (QUERY_ID, DOC_ID, BLIND_ID, ANNOTATOR, GRADE, JUDGED_AT, GUIDELINE,
                        POOL_ID)

# judged qrels (data/judgments/qrels.parquet): the qrels columns, then their provenance
N_JUDGES = "n_judges"
AGREEMENT = "agreement"
ADJUDICATED = "adjudicated"
JUDGED_QRELS_COLUMNS = (*QRELS_COLUMNS, N_JUDGES, AGREEMENT, ADJUDICATED, POOL_ID, GUIDELINE)


# --- the rules ------------------------------------------------------------------------------


def where(frame: pd.DataFrame, label) -> str:
    """'line 12' / 'row 3' for a frame a reader tagged; 'index 5' for any other."""
    return f"{frame.attrs.get('unit', 'index')} {label}"


def source_of(frame: pd.DataFrame, default: str) -> str:
    return frame.attrs.get("source", default)


def fail_first(frame: pd.DataFrame, default: str, mask: np.ndarray, rule) -> None:
    """InputError at the first row where ``mask`` holds (``rule``: the message, or a callable
    of that row's position)."""
    if mask.any():
        i = int(np.argmax(mask))
        raise InputError(rule(i) if callable(rule) else rule, source_of(frame, default),
                         where(frame, frame.index[i]))


def require_columns(frame: pd.DataFrame | None, columns: Iterable[str],
                    source: str) -> pd.DataFrame:
    """``frame`` when it has every one of ``columns``; else InputError naming the missing and
    the present ones (a frame's own source first)."""
    if frame is None:
        raise InputError("table is required", source)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; found {list(frame.columns)}",
                         source_of(frame, source))
    return frame


def require_unique(frame: pd.DataFrame, column: str, source: str) -> None:
    """InputError naming the first repeated value of ``column`` and where it is."""
    dup = frame[column].duplicated()
    if dup.any():
        label = dup.idxmax()
        raise InputError(f"{column} {frame[column][label]!r} is not unique",
                         source_of(frame, source), where(frame, label))


def integer(name: str, value, low: int | None = 1, source: str = "params") -> int:
    """``value`` as an int (≥ ``low`` unless None), else InputError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or (
            low is not None and value < low):
        bound = f" ≥ {low}" if low is not None else ""
        raise InputError(f"{name} must be an integer{bound}, got {value!r}", source)
    return int(value)


def first_duplicate(keys: np.ndarray) -> tuple[int, int] | None:
    """Row positions (first, repeat) of the first repeated key, or None."""
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return None
    rows = np.flatnonzero(np.isin(keys, ordered[1:][same]))
    seen: dict[int, int] = {}
    for i in rows:  # only the handful of rows that repeat
        if keys[i] in seen:
            return seen[keys[i]], int(i)
        seen[keys[i]] = int(i)
    return None


def duplicate_doc(run: pd.DataFrame, dup: tuple[int, int], query: str, doc: str) -> None:
    i, j = dup
    raise InputError(f"duplicate doc_id {doc!r} in the ranked list of query {query!r} (first "
                     f"at {where(run, run.index[i])})", source_of(run, "run"),
                     where(run, run.index[j]))


class AboveScale(InputError):
    """A qrels grade above the declared scale's maximum (``grade``, ``max_grade``)."""

    def __init__(self, grade: int, max_grade: int, source: str, where: str | None = None):
        self.grade, self.max_grade = grade, max_grade
        super().__init__(f"grade {grade} is above the declared scale's maximum {max_grade} "
                         "(declare the scale: max_grade)", source, where)

    def __reduce__(self):
        return type(self), (self.grade, self.max_grade, self.source, self.where)


def check_grades(qrels: pd.DataFrame, max_grade: int) -> np.ndarray:
    """Qrels grades as float64: integers ≤ ``max_grade`` (negative grades are allowed and
    mean judged non-relevant, as in trec_eval)."""
    if GRADE not in qrels.columns:
        raise InputError(f"missing column {GRADE}; found {list(qrels.columns)}",
                         source_of(qrels, "qrels"))
    grade = pd.to_numeric(qrels[GRADE], errors="coerce").to_numpy(dtype=float)
    fail_first(qrels, "qrels", np.isnan(grade) | (grade != np.floor(grade)),
               lambda i: f"grade must be an integer, got {qrels[GRADE].iloc[i]!r}")
    above = grade > max_grade
    if above.any():
        i = int(np.argmax(above))
        raise AboveScale(int(grade[i]), max_grade, source_of(qrels, "qrels"),
                         where(qrels, qrels.index[i]))
    return grade


def check_ranks(run: pd.DataFrame) -> np.ndarray:
    """A run's rank column as int64: integers ≥ 1."""
    rank = run[RANK].to_numpy()
    if not pd.api.types.is_integer_dtype(rank):
        rank = pd.to_numeric(run[RANK], errors="coerce").to_numpy(dtype=float)
        fail_first(run, "run", np.isnan(rank) | (rank != np.floor(rank)),
                   lambda i: f"rank must be an integer, got {run[RANK].tolist()[i]!r}")
    rank = rank.astype(np.int64)
    fail_first(run, "run", rank < 1, lambda i: f"rank must be ≥ 1, got {rank[i]}")
    return rank


def repeated_rank(run: pd.DataFrame, rank: np.ndarray, dup: tuple[int, int]) -> None:
    raise InputError(f"rank {int(rank[dup[1]])} repeated in query "
                     f"{run[QUERY_ID].iloc[dup[1]]!r} (first at "
                     f"{where(run, run.index[dup[0]])})", source_of(run, "run"),
                     where(run, run.index[dup[1]]))


def check_scores(run: pd.DataFrame) -> np.ndarray:
    """A run's score column as float64: a number on every row, never NaN."""
    if SCORE not in run.columns:
        raise InputError("a run needs a rank or a score column", source_of(run, "run"))
    score = pd.to_numeric(run[SCORE], errors="coerce").to_numpy(dtype=float)
    fail_first(run, "run", np.isnan(score), "score is NaN or missing")
    return score


def ids(frame: pd.DataFrame, column: str, default: str) -> pd.Series:
    """An id column (query_id, doc_id): present, with a value on every row."""
    if column not in frame.columns:
        raise InputError(f"missing column {column}; found {list(frame.columns)}",
                         source_of(frame, default))
    values = frame[column]
    fail_first(frame, default, values.isna().to_numpy(), f"{column} is missing")
    return values


def check_run(run: pd.DataFrame) -> None:
    """The run contract every evaluated run meets (trec_eval's rules): a query_id and a doc_id
    on every row, a doc_id at most once per query; with a rank column, ranks integers ≥ 1 and
    distinct per query; without one, a score on every row, never NaN. The evaluator
    (``releval.metrics.ranking``) applies the same rules while it encodes the run."""
    query_ids = ids(run, QUERY_ID, "run").astype(str)
    doc_ids = ids(run, DOC_ID, "run").astype(str)
    queries = pd.factorize(query_ids)[0].astype(np.int64)
    docs, names = pd.factorize(doc_ids)
    dup = first_duplicate(queries * max(len(names), 1) + docs)
    if dup:
        duplicate_doc(run, dup, query_ids.iloc[dup[1]], doc_ids.iloc[dup[1]])
    if RANK in run.columns:
        rank = check_ranks(run)
        dup = first_duplicate(queries * (int(rank.max(initial=0)) + 1) + rank)
        if dup:
            repeated_rank(run, rank, dup)
    else:
        check_scores(run)


# a candidate window (the runs the stages write): ranks 1..n per list, scores non-increasing


def _in_rank_order(frame: pd.DataFrame, column: str) -> tuple[pd.Series, pd.Series]:
    """``column`` (as numbers) sorted by rank within each ranked list (a system's list of a
    query, and of a seed where the frame has ``SEED``), and its change from the list's
    previous row (NaN on the list's first row); both indexed by row position."""
    key = [*LIST_KEY, SEED] if SEED in frame.columns else LIST_KEY  # a list per seed, if any
    ranked = frame[list(dict.fromkeys([*key, RANK, column]))].reset_index(drop=True)
    for c in dict.fromkeys([RANK, column]):
        ranked[c] = pd.to_numeric(ranked[c], errors="coerce")
    ranked = ranked.sort_values([*key, RANK], kind="stable")
    return ranked[column], ranked.groupby(key, sort=False, dropna=False)[column].diff()


def rank_contiguous(frame: pd.DataFrame) -> np.ndarray:
    """False where a rank does not continue its list's 1, 2, 3, ... (gap, repeat, bad start)."""
    rank, step = _in_rank_order(frame, RANK)
    return (step.eq(1) | (step.isna() & rank.eq(1))).sort_index().to_numpy()


def score_order_ok(frame: pd.DataFrame) -> np.ndarray:
    """False where a score is higher than the score one rank above it in the same list."""
    _, step = _in_rank_order(frame, SCORE)
    return (~step.gt(0)).sort_index().to_numpy()


# --- query sources (QUERY_SOURCE) ------------------------------------------------------------


def query_source_ok(queries: pd.DataFrame) -> np.ndarray:
    """False where a query's source is not one of QUERY_SOURCES (a missing value included);
    True everywhere for queries without the column."""
    if QUERY_SOURCE not in queries.columns:
        return np.ones(len(queries), bool)
    return queries[QUERY_SOURCE].isin(QUERY_SOURCES).to_numpy(bool)


def query_sources(queries: pd.DataFrame, source: str) -> pd.Series:
    """Each query's sampling source as str, on ``queries``' index: LOGGED for every query
    without the column; InputError naming the first value not in QUERY_SOURCES."""
    if QUERY_SOURCE not in queries.columns:
        return pd.Series(LOGGED, index=queries.index, dtype=object)
    fail_first(queries, source, ~query_source_ok(queries),
               lambda i: f"{QUERY_SOURCE} must be one of {', '.join(QUERY_SOURCES)}, got "
               f"{queries[QUERY_SOURCE].iloc[i]!r}")
    return queries[QUERY_SOURCE].astype(str).astype(object)


# --- hard negatives (HARD_NEGATIVE) ------------------------------------------------------------
# A mark is yes or no: a boolean, 1 / 0, or the text true / false, yes / no, 1 / 0 (any case,
# surrounding spaces ignored). A missing value, and a missing column, is no: not marked.
HARD_NEGATIVE_BELOW = 1  # a hard negative's grade is below this (judged not relevant)
_MARK_WORDS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def read_marks(values: pd.Series) -> pd.Series:
    """Marks as a nullable boolean Series: True or False where ``values`` says yes or no,
    False where a value is missing, <NA> where it says neither."""
    if pd.api.types.is_bool_dtype(values):
        return values.astype("boolean").fillna(False)
    if pd.api.types.is_numeric_dtype(values):
        number = values.astype("float64")
        return pd.Series(number.map({1.0: True, 0.0: False}), dtype="boolean").mask(
            number.isna(), False)
    text = values.astype("string").str.strip().str.lower()
    return text.map(_MARK_WORDS, na_action="ignore").astype("boolean").mask(
        text.isna() | (text == ""), False)


def hard_negative_marks(frame: pd.DataFrame, source: str) -> pd.Series:
    """``frame``'s marks as bool, on its index (all False when it has no hard_negative
    column); InputError naming the first value that is neither yes nor no."""
    if HARD_NEGATIVE not in frame.columns:
        return pd.Series(False, index=frame.index)
    read = read_marks(frame[HARD_NEGATIVE])
    fail_first(frame, source, read.isna().to_numpy(),
               lambda i: f"{HARD_NEGATIVE} must be yes or no, got "
               f"{frame[HARD_NEGATIVE].iloc[i]!r}")
    return read.astype(bool)


def hard_negative_flags(qrels: pd.DataFrame, source: str,
                        grade: np.ndarray | None = None) -> np.ndarray:
    """Per row of ``qrels``, whether it is a hard negative (``hard_negative_marks``: all False
    without the column); InputError naming the first mark on a relevant grade (≥
    ``HARD_NEGATIVE_BELOW``). ``grade``: the rows' grades when already read as numbers."""
    if HARD_NEGATIVE not in qrels.columns:
        return np.zeros(len(qrels), bool)
    mark = hard_negative_marks(qrels, source).to_numpy()
    if grade is None:
        grade = pd.to_numeric(qrels[GRADE], errors="coerce").to_numpy(float)
    fail_first(qrels, source, mark & (grade >= HARD_NEGATIVE_BELOW),
               lambda i: "a hard negative is judged not relevant (grade below "
               f"{HARD_NEGATIVE_BELOW}), got grade {grade[i]:g}")
    return mark


def checked_hard_negatives(qrels: pd.DataFrame, source: str) -> pd.DataFrame:
    """``qrels`` with its hard_negative column as bool (``hard_negative_flags``)."""
    return qrels.assign(**{HARD_NEGATIVE: hard_negative_flags(qrels, source)})
