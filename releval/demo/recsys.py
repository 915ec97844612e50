"""Deterministic recommendation demo data: a gift shop's purchase log whose generative process
is known, so the true probability that a user buys an item within a horizon is computable.

``generate_recsys(seed, ...)`` returns ``RecDemo(log, items, truth)``; the same arguments give
identical frames (only ``numpy.random.default_rng(seed)`` draws randomness). The process:

- items: each of one topic (``TOPICS``: its category), titled from the topic's nouns and
  shared colour and style words (items of a topic share words); a Zipf popularity weight
  w_i = rank_i^-``ZIPF``; first_seen a day a_i: ``LAUNCH_SHARE`` of the catalogue at the
  start (at least one item per topic), the rest uniform over the period.
- users: a join day j_u (``EARLY_USERS`` at the start, the rest uniform), a purchase rate
  λ_u per day (lognormal), a rebuy rate ρ_u per day per owned item (lognormal), a country
  (one dominant), and topic tastes θ_u(d) = (1 − d/D)·θ0_u + (d/D)·θ1_u (Dirichlet; θ1 = θ0
  for the users whose taste does not drift).
- fresh purchases: on each day d ≥ j_u, Poisson(λ_u) purchases, each of item i with
  probability p(i | u, d) = θ_u(d)[k_i]·w_i·[a_i ≤ d] / Z_u(d), Z_u(d) = Σ_k θ_u(d)[k]·W_k(d),
  W_k(d) = Σ_{i of topic k, a_i ≤ d} w_i; so item i's count on day d is Poisson(λ_u·p).
- rebuys: after a user's first purchase of i on day d0, Poisson(ρ_u) rebuys of i on each
  later day.
- times: a uniform minute of the day; ``CANCEL_SHARE`` of the purchase lines are cancelled
  (a label-0 line) up to two days later, within the period.

Hence, for a window [t, e) and m_d the share of day d's minutes in it, the number of
purchases of i by u in [t, e) is Poisson(μ) with μ = Σ_d m_d·λ_u·p(i | u, d), plus
ρ_u·Σ_{d > d0} m_d when u bought i first on day d0 before t; P(buy) = 1 − exp(−μ).
``team_runs`` scores two simulated team systems with it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval.data import contracts as S
from releval.data.adapters import TIME
from releval.data.history import History
from releval.data.interactions import RecData
from releval.data.visibility import Visibility

TOPICS = {
    "kitchen": ("teapot", "mug", "cake tin", "jam jar", "tea towel", "lunch box", "egg cup",
                "baking tray"),
    "garden": ("plant pot", "watering can", "bird feeder", "seed tray", "garden gloves",
               "wind chime", "trowel", "herb planter"),
    "stationery": ("notebook", "pencil case", "greeting card", "gift wrap", "sticker sheet",
                   "memo pad", "envelope set", "bookmark"),
    "toys": ("spinning top", "jigsaw puzzle", "rag doll", "toy soldier", "skipping rope",
             "marble bag", "wooden train", "kite"),
    "lighting": ("tealight holder", "lantern", "candle", "fairy lights", "night light",
                 "lamp shade", "candlestick", "string lights"),
    "textiles": ("cushion cover", "tote bag", "apron", "blanket", "oven glove", "bunting",
                 "shopping bag", "hot water bottle"),
    "party": ("paper plates", "party bag", "balloon set", "napkins", "cake stand",
              "paper cups", "party hats", "confetti"),
    "bathroom": ("soap dish", "towel", "toothbrush holder", "wash bag", "bath salts",
                 "mirror", "sponge", "laundry bag"),
}
COLOURS = ("red", "blue", "pink", "green", "ivory", "black", "white", "yellow", "grey",
           "lilac")
STYLES = ("vintage", "retro", "spotty", "floral", "heart", "woodland", "regency", "scandi",
          "polkadot", "striped", "christmas", "antique")
COUNTRIES = ("United Kingdom", "Germany", "France", "Netherlands", "Spain", "Norway")
COUNTRY_SHARES = (0.82, 0.06, 0.05, 0.03, 0.02, 0.02)
ZIPF = 1.05  # popularity exponent
LAUNCH_SHARE = 0.45  # of items on sale from the first day
EARLY_USERS = 0.35  # of users active from the first day
RATE = (np.log(0.07), 0.8)  # lognormal (mean log, sigma) of purchases per user-day
REBUY = (np.log(0.003), 0.7)  # lognormal of rebuys per owned item per day
TASTE = 0.3  # Dirichlet concentration of topic tastes (small: a few topics per user)
DRIFT_SHARE = 0.5  # of users whose taste drifts from θ0 to θ1
CANCEL_SHARE = 0.02
MINUTES = 1440
OVER_SLOPE, OVER_SHIFT = 1.5, 2.5  # team_overconfident: sigmoid(a·logit(p) + b)
CALIBRATED_NOISE, CALIBRATED_BINS = 1.0, 50  # team_calibrated: a blurred view, recalibrated
TEAMS = ("team_calibrated", "team_overconfident")
TEAM_COLUMNS = (S.SYSTEM, S.USER_ID, S.ITEM_ID, S.SCORE, S.PROBABILITY, S.SPLIT)


@dataclass(frozen=True)
class Truth:
    """The generative parameters (module docstring), users and items in id order."""

    start: pd.Timestamp
    days: int
    user_ids: np.ndarray
    item_ids: np.ndarray
    item_topic: np.ndarray  # k_i
    item_weight: np.ndarray  # w_i
    item_day: np.ndarray  # a_i
    topic_weight: np.ndarray  # W_k(d), topics × days
    user_join: np.ndarray  # j_u
    user_rate: np.ndarray  # λ_u
    user_rebuy: np.ndarray  # ρ_u
    taste0: np.ndarray  # users × topics
    taste1: np.ndarray

    def taste(self, users: np.ndarray, days: np.ndarray) -> np.ndarray:
        """θ_u(d), broadcasting ``users`` against ``days``: shape (..., topics)."""
        s = (days / self.days)[..., None]
        return (1 - s) * self.taste0[users] + s * self.taste1[users]


@dataclass(frozen=True)
class RecDemo:
    """The log (``S.INTERACTION_COLUMNS`` + country, in time order), the items (item_id,
    title, category, first_seen) and the process that made them."""

    log: pd.DataFrame
    items: pd.DataFrame
    truth: Truth


def _ids(prefix: str, n: int) -> np.ndarray:
    width = len(str(max(n - 1, 0)))
    return np.char.add(prefix, np.char.zfill(np.arange(n).astype(str), width)).astype(object)


def _items(rng: np.random.Generator, n: int, days: int) -> tuple[np.ndarray, ...]:
    """Topic, weight, first day and title of each item."""
    names = list(TOPICS)
    topic = rng.permutation(np.arange(n) % len(names))
    day = np.where(rng.random(n) < LAUNCH_SHARE, 0, rng.integers(1, days, n))
    day[np.unique(topic, return_index=True)[1]] = 0  # every topic on sale from day 0
    weight = (rng.permutation(n) + 1.0) ** -ZIPF
    nouns = np.array([TOPICS[names[k]][j] for k, j in
                      zip(topic, rng.integers(0, len(TOPICS[names[0]]), n), strict=True)])
    title = np.char.add(np.char.add(np.char.add(
        np.asarray(COLOURS)[rng.integers(0, len(COLOURS), n)], " "),
        np.char.add(np.asarray(STYLES)[rng.integers(0, len(STYLES), n)], " ")), nouns)
    return topic, weight, day, title.astype(object)


def _choose(rng: np.random.Generator, truth: Truth, users: np.ndarray,
            days: np.ndarray) -> np.ndarray:
    """One item per (user, day) purchase, drawn from p(i | u, d): a topic with probability
    θ_u(d)[k]·W_k(d) / Z_u(d), then an item of that topic on sale at d ∝ w_i."""
    d_n = truth.days
    mass = np.cumsum(truth.taste(users, days) * truth.topic_weight[:, days].T, axis=1)
    topic = (mass < rng.random(len(users))[:, None] * mass[:, -1:]).sum(axis=1)
    order = np.lexsort((truth.item_day, truth.item_topic))  # by topic, then first day
    key = truth.item_topic[order] * (d_n + 1) + truth.item_day[order]
    cum = np.cumsum(truth.item_weight[order])
    begin = np.searchsorted(key, topic * (d_n + 1), side="left")
    end = np.searchsorted(key, topic * (d_n + 1) + days, side="right")
    low = np.where(begin > 0, cum[np.maximum(begin - 1, 0)], 0.0)
    target = low + rng.random(len(users)) * (cum[end - 1] - low)
    pick = np.clip(np.searchsorted(cum, target, side="right"), begin, end - 1)
    return order[pick]


def generate_recsys(seed: int = 0, n_users: int = 1500, n_items: int = 800,
                    start: str = "2025-01-01", months: int = 12) -> RecDemo:
    """The demo log and catalogue (module docstring); about 60k lines at the defaults."""
    rng = np.random.default_rng(seed)
    begin = pd.Timestamp(start)
    begin = begin.tz_localize("UTC") if begin.tzinfo is None else begin.tz_convert("UTC")
    days = (begin + pd.DateOffset(months=months) - begin).days
    topic, weight, item_day, title = _items(rng, n_items, days)
    topic_weight = np.zeros((len(TOPICS), days))
    np.add.at(topic_weight, (topic, item_day), weight)
    join = np.where(rng.random(n_users) < EARLY_USERS, 0, rng.integers(0, days, n_users))
    taste0 = rng.dirichlet(np.full(len(TOPICS), TASTE), n_users)
    drift = rng.random(n_users) < DRIFT_SHARE
    taste1 = np.where(drift[:, None], rng.dirichlet(np.full(len(TOPICS), TASTE), n_users),
                      taste0)
    user_ids, item_ids = _ids("u", n_users), _ids("i", n_items)
    truth = Truth(begin, days, user_ids, item_ids, topic, weight, item_day,
                  np.cumsum(topic_weight, axis=1), join,
                  rng.lognormal(*RATE, n_users), rng.lognormal(*REBUY, n_users), taste0, taste1)
    counts = rng.poisson(truth.user_rate[:, None] * (np.arange(days)[None, :] >= join[:, None]))
    user, day = np.nonzero(counts)
    user, day = np.repeat(user, counts[user, day]), np.repeat(day, counts[user, day])
    item = _choose(rng, truth, user, day)
    first = pd.DataFrame({"u": user, "i": item, "d": day}).groupby(["u", "i"]).d.min()
    fu, fi, fd = (first.index.get_level_values(0).to_numpy(),
                  first.index.get_level_values(1).to_numpy(), first.to_numpy())
    n_rebuy = rng.poisson(truth.user_rebuy[fu] * (days - 1 - fd))
    gap = days - 1 - np.repeat(fd, n_rebuy)
    user = np.concatenate([user, np.repeat(fu, n_rebuy)])
    item = np.concatenate([item, np.repeat(fi, n_rebuy)])
    day = np.concatenate([day, np.repeat(fd, n_rebuy) + 1
                          + np.floor(rng.random(len(gap)) * gap).astype(np.int64)])
    minute = day * MINUTES + rng.integers(0, MINUTES, len(day))
    cancel = np.flatnonzero(rng.random(len(minute)) < CANCEL_SHARE)
    late = minute[cancel] + rng.integers(1, 2 * MINUTES, len(cancel))
    cancel, late = cancel[late < days * MINUTES], late[late < days * MINUTES]
    country = np.asarray(COUNTRIES, dtype=object)[
        rng.choice(len(COUNTRIES), n_users, p=COUNTRY_SHARES)]
    rows = pd.DataFrame({
        "u": np.concatenate([user, user[cancel]]), "i": np.concatenate([item, item[cancel]]),
        "m": np.concatenate([minute, late]),
        S.LABEL: np.concatenate([np.ones(len(minute), np.int64),
                                 np.zeros(len(cancel), np.int64)])})
    rows = rows.sort_values(["m", "u", "i", S.LABEL], kind="stable", ignore_index=True)
    log = pd.DataFrame({
        S.USER_ID: pd.Series(user_ids[rows["u"]], dtype=str),
        S.ITEM_ID: pd.Series(item_ids[rows["i"]], dtype=str),
        S.TIMESTAMP: (begin + pd.to_timedelta(rows["m"].to_numpy(), unit="min")).astype(TIME),
        S.LABEL: rows[S.LABEL].to_numpy(),
        "country": pd.Series(country[rows["u"]], dtype=str)})
    items = pd.DataFrame({
        S.ITEM_ID: pd.Series(item_ids, dtype=str), S.TITLE: pd.Series(title, dtype=str),
        S.CATEGORY: pd.Series(np.asarray(list(TOPICS), dtype=object)[topic], dtype=str),
        S.FIRST_SEEN: (begin + pd.to_timedelta(item_day, unit="D")).astype(TIME)})
    return RecDemo(log, items, truth)


def _overlap(truth: Truth, t: pd.Timestamp, end: pd.Timestamp) -> np.ndarray:
    """m_d: the share of day d's minutes (the times the log uses) in [t, end)."""
    def minutes_before(x: pd.Timestamp) -> np.ndarray:
        since = (x - truth.start) / pd.Timedelta(minutes=1) - np.arange(truth.days) * MINUTES
        return np.clip(np.ceil(since), 0, MINUTES)
    return (minutes_before(end) - minutes_before(t)) / MINUTES


def _expected(truth: Truth, users: np.ndarray, items: np.ndarray,
              share: np.ndarray) -> np.ndarray:
    """Σ_d m_d·λ_u·p(i | u, d) for items on sale by the window's first day: (users, items)."""
    days = np.flatnonzero(share > 0)
    theta = truth.taste(users[:, None], days[None, :])
    z = (theta * truth.topic_weight[:, days].T[None, :, :]).sum(axis=2)
    active = days[None, :] >= truth.user_join[users][:, None]
    per_topic = ((share[days][None, :] * active / z)[:, :, None] * theta).sum(axis=1)
    return (truth.user_rate[users][:, None] * truth.item_weight[items][None, :]
            * per_topic[:, truth.item_topic[items]])


def _probabilities(demo: RecDemo, data: RecData, history: History, queries: pd.DataFrame,
                   t: pd.Timestamp, end: pd.Timestamp,
                   exclude_seen: bool) -> tuple[np.ndarray, np.ndarray]:
    """P(the query's user buys each document within [t, end)), and which documents are
    candidates (visible at t, and not seen when ``exclude_seen``): (queries, documents)."""
    truth = demo.truth
    users = pd.Index(truth.user_ids).get_indexer(queries[S.USER_ID])
    items = pd.Index(truth.item_ids).get_indexer(data.documents[S.DOC_ID])
    share = _overlap(truth, t, end)
    mu = _expected(truth, users, items, share)
    first = history.profile(queries).groupby([S.QUERY_ID, S.ITEM_ID])[S.TIMESTAMP].min() \
        .reset_index()  # the items each user had before t: seen, with their first day
    qi = pd.Index(queries[S.QUERY_ID]).get_indexer(first[S.QUERY_ID])
    di = pd.Index(data.documents[S.DOC_ID]).get_indexer(first[S.ITEM_ID])
    d0 = ((first[S.TIMESTAMP] - truth.start) // pd.Timedelta(days=1)).to_numpy()
    after = share.sum() - np.cumsum(share)  # Σ_{d > d0} m_d
    mu[qi, di] += truth.user_rebuy[users[qi]] * after[d0]
    candidates = Visibility(data.documents).mask(queries)
    if exclude_seen:
        candidates[qi, di] = False
    return -np.expm1(-mu), candidates


def _recalibrated(view: np.ndarray, p: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Each candidate's mean true p within its equal-mass bin of ``view`` (over the
    candidates): the probability a model that only sees ``view`` reports when calibrated."""
    out = np.zeros_like(p)
    v = view[candidates]
    order = np.argsort(v, kind="stable")
    bins = np.empty(len(v), np.int64)
    bins[order] = np.arange(len(v)) * CALIBRATED_BINS // max(len(v), 1)
    sums = np.bincount(bins, weights=p[candidates], minlength=CALIBRATED_BINS)
    counts = np.bincount(bins, minlength=CALIBRATED_BINS)
    out[candidates] = (sums / np.maximum(counts, 1))[bins]
    return out


def _overconfident(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):  # p underflowing to 0: logit −inf, over 0
        logit = np.log(p) - np.log1p(-p)
    return 1 / (1 + np.exp(-(OVER_SLOPE * logit + OVER_SHIFT)))


def no_team_runs() -> pd.DataFrame:
    """An empty team-runs table with ``TEAM_COLUMNS`` and their dtypes."""
    return pd.DataFrame({c: pd.Series(dtype=float if c in (S.SCORE, S.PROBABILITY) else str)
                         for c in TEAM_COLUMNS})


def team_runs(demo: RecDemo, data: RecData, depth: int, exclude_seen: bool = True,
              seed: int = 0) -> pd.DataFrame:
    """Two simulated team systems on every user-query of ``data`` (``TEAM_COLUMNS``, best
    first per system, split and user), over the candidates (visible at the cut, not seen when
    ``exclude_seen``), with p the true P(the user buys the item within the query's window):

    - ``team_calibrated`` (the current model) sees p blurred, v = log p + ``CALIBRATED_NOISE``·ε
      (ε ~ N(0, 1), seeded), ranks by v and reports as its probability the mean true p of its
      ``CALIBRATED_BINS`` equal-mass bins of v: calibrated by construction, a weaker ranking;
    - ``team_overconfident`` (the retrained model) ranks by p itself, the best ranking there
      is, but reports sigmoid(``OVER_SLOPE``·logit(p) + ``OVER_SHIFT``): miscalibrated.

    Each keeps its top ``depth`` per user (ties by item_id); its score is v, resp. its
    probability."""
    rng = np.random.default_rng(seed)
    frames = []
    split_of = data.given_split.set_index(S.QUERY_ID)[S.SPLIT]
    by_id = np.argsort(data.documents[S.DOC_ID].to_numpy(dtype=object), kind="stable")
    history = History(demo.log)
    for split, (t, end) in data.windows.items():  # one vectorised pass per cut
        queries = data.queries[data.queries[S.QUERY_ID].map(split_of) == split]
        p, candidates = _probabilities(demo, data, history, queries, t, end, exclude_seen)
        p, candidates = p[:, by_id], candidates[:, by_id]
        with np.errstate(divide="ignore"):  # p underflowing to 0: log −inf, ranked last
            blurred = np.log(p) + CALIBRATED_NOISE * rng.standard_normal(p.shape)
        for system, score, prob in ((TEAMS[0], blurred, _recalibrated(blurred, p, candidates)),
                                    (TEAMS[1], *[_overconfident(p)] * 2)):
            order = np.argsort(np.where(candidates, -score, np.inf), axis=1,
                               kind="stable")[:, :depth]
            keep = np.take_along_axis(candidates, order, axis=1)
            row = np.repeat(np.arange(len(queries)), order.shape[1])[keep.ravel()]
            col = order.ravel()[keep.ravel()]
            index = pd.RangeIndex(len(row))
            frames.append(pd.DataFrame({
                S.SYSTEM: pd.Series(system, index, dtype=str),
                S.USER_ID: queries[S.USER_ID].take(row).array,
                S.ITEM_ID: data.documents[S.DOC_ID].take(by_id[col]).array,
                S.SCORE: score[row, col], S.PROBABILITY: prob[row, col],
                S.SPLIT: pd.Series(split, index, dtype=str)}))
    return pd.concat(frames, ignore_index=True)
