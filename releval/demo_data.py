"""Deterministic demo data: an internal-support knowledge base, its query log and hidden
graded relevance, following the documents / queries / qrels contracts of DESIGN.md.

``generate(...)`` returns ``DemoData(documents, queries, ground_truth, must_not_return)``; the
same arguments give identical frames (only ``numpy.random.Generator(seed)`` draws randomness).

- documents (``S.DOCUMENT_COLUMNS``): chunks of knowledge-base articles. Chunks of one article
  share ``source_id`` (``acme-kb00042``) and are numbered ``acme-kb00042#0``, ``#1``, ...
  Articles are troubleshooting notes (a model number such as ``XR-220``, an error code such
  as ``E-4012``), datasheets (numbers), how-to guides (in pairs that differ by a negation:
  a factory reset *erases* data, a soft reset *retains* it) and internal runbooks
  (acl ``["staff"]``, sometimes ``["admin"]``). Statuses are mostly ``published``;
  ``deleted_at`` is set only for ``deleted`` and is never before ``published_at``.
- queries (``S.QUERY_COLUMNS``): one row per logged query, sorted by ``issued_at``.
  ``tags`` holds ``head`` (the same text logged several times by different users, weight
  above 1) or ``tail`` (logged once, weight at most 1), plus the kind of query:
  ``error_code`` and ``numeric`` quote the code or model number of the answer verbatim
  (lexical retrieval wins); ``paraphrase`` describes the problem in colloquial words that
  the answer does not use (semantic retrieval wins); ``typo`` misspells one word;
  ``negation`` asks for the *without* variant of a how-to whose *with* twin is judged
  not relevant; ``authz_boundary`` is asked by a user who may not see the answer;
  ``no_answer`` has no relevant document. A query's answer was published before it was
  issued, except for about 2% (the answer came later).
- ground_truth (``S.QRELS_COLUMNS``): grade 3 = the chunk holding the answer, 2 = the other
  chunks of that article, 1 = answer chunks of up to two related articles (same model, or
  same service for runbooks), 0 = one near miss judged not relevant (the negated twin, the
  same symptom on another model, the same operation on another service). Grades ignore
  visibility: access and time rules are applied by retrieval.
- must_not_return (``S.MUST_NOT_RETURN_COLUMNS``): for every query tagged ``authz_boundary``,
  each of its ground-truth documents (any grade) that the query may not see by the visibility
  rule, with reason ``restricted answer: <acl groups> only`` (e.g. ``restricted answer: staff
  only``); the few of them hidden by time or status rather than by an ACL read
  ``restricted answer: not visible (<visibility reason>)``. In ground-truth order.

``GUEST_RUNBOOK_QUERY_ID`` names the guaranteed authz case: a guest asks for a procedure
that only internal runbooks (acl ``["staff"]``) answer; every document in its ground truth
has acl ``["staff"]``. (Other guest queries tagged ``authz_boundary`` are alike, but their
runbooks may be ``["admin"]`` or internal troubleshooting notes.)

Work is vectorised over documents and queries (never documents × queries): about 0.05 s for
5,000 documents and 1,000 queries, under a second for 100,000 documents (the error-code space
A-1000..Z-9999 bounds n_docs at about two million).
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np
import pandas as pd

from releval import schema as S
from releval.visibility import forbidden_reasons

GUEST_RUNBOOK_QUERY_ID = "q000000"
MIN_DOCS, MIN_QUERIES = 50, 20

TENANT_NAMES = ("acme", "globex", "initech", "umbrella", "hooli", "soylent", "wonka", "tyrell")

# Product families: (formal name used in documents, colloquial name used only in paraphrase
# queries, model-number prefixes, possible symptoms, possible procedures). Formal and
# colloquial names share no words.
FAMILIES = (
    ("wireless router", "wifi box", ("XR", "WR"),
     ("connection", "power", "firmware", "throughput", "heat", "reboot"),
     ("reset", "firmware", "registration")),
    ("laser printer", "office copier", ("LP", "PX"),
     ("connection", "power", "firmware", "auth", "heat", "reboot", "storage"),
     ("reset", "agent", "firmware", "registration")),
    ("laptop", "work computer", ("NB", "LT"),
     ("connection", "power", "firmware", "auth", "heat", "reboot", "audio", "calendar",
      "storage"),
     ("reset", "agent", "firmware", "registration")),
    ("VoIP handset", "desk phone", ("VH", "SP"),
     ("connection", "power", "firmware", "auth", "audio", "reboot", "calendar"),
     ("reset", "firmware", "pairing", "registration")),
    ("badge reader", "door card scanner", ("BR", "AC"),
     ("connection", "power", "firmware", "auth", "reboot"),
     ("reset", "firmware", "registration")),
    ("docking station", "usb-c hub", ("DS", "DK"),
     ("connection", "power", "firmware", "throughput", "heat", "audio"),
     ("reset", "firmware", "registration")),
    ("wireless headset", "earpiece", ("WH", "HD"),
     ("connection", "power", "firmware", "audio"),
     ("reset", "firmware", "pairing", "registration")),
    ("conference display", "meeting room tv", ("CD", "MR"),
     ("connection", "power", "firmware", "audio", "calendar", "reboot"),
     ("reset", "agent", "firmware", "registration")),
    ("barcode scanner", "label zapper", ("BS", "HS"),
     ("connection", "power", "firmware", "reboot", "storage"),
     ("reset", "firmware", "pairing", "registration")),
    ("network storage appliance", "shared drive box", ("NS", "SA"),
     ("connection", "power", "firmware", "auth", "throughput", "heat", "reboot", "storage"),
     ("reset", "agent", "firmware", "registration")),
)
MODEL_NUMBERS = 900  # model numbers 100..999 per prefix
ABSENT_PREFIX = "ZQ"  # never a real family prefix: models asked about by no_answer queries

# Symptoms (names as in FAMILIES): (formal sentence part, article title, keyword query,
# colloquial paraphrase)
SYMPTOM_NAMES = ("connection", "power", "firmware", "auth", "throughput", "heat", "reboot",
                 "audio", "calendar", "storage")
SYMPTOMS = (
    ("fails to establish a network connection", "network connection failure",
     "connection failure", "keeps going offline"),
    ("does not power on", "no power", "power failure", "is totally dead and won't switch on"),
    ("aborts the firmware update", "firmware update aborted", "firmware update fails",
     "got stuck halfway through upgrading"),
    ("rejects user credentials during authentication", "authentication failure",
     "authentication failure", "won't take my password"),
    ("exhibits degraded throughput", "degraded throughput", "low throughput",
     "is super sluggish lately"),
    ("overheats under sustained load", "thermal shutdown", "overheating",
     "gets really hot and smells weird"),
    ("reboots intermittently", "intermittent reboots", "random reboot",
     "keeps restarting on its own"),
    ("produces no audio output", "no audio output", "no audio", "makes no sound at all"),
    ("fails to synchronise calendar entries", "calendar synchronisation failure",
     "calendar sync error", "stopped showing my meetings"),
    ("reports insufficient storage capacity", "storage capacity exhausted", "storage full",
     "says it's full"),
)
# Causes and their resolutions
CAUSES = (
    ("a corrupted configuration profile",
     "Delete the configuration profile, re-enrol the {model} in device management and verify "
     "that the status indicator is green."),
    ("an expired device certificate",
     "Renew the device certificate in the administration console and run the diagnostic "
     "self-test on the {model}."),
    ("a defective power adapter",
     "Replace the power adapter, then confirm that the status indicator of the {model} is "
     "solid green."),
    ("an outdated firmware image",
     "Disconnect the {model} from mains supply for 30 seconds, then apply firmware revision "
     "{fw} from the administration console."),
    ("a saturated uplink",
     "Limit concurrent sessions on the {model} and move it to a dedicated segment during the "
     "next maintenance window."),
    ("clock drift on the device",
     "Synchronise the {model} clock with the corporate time server and apply revision {fw}."),
)
TROUBLE_ANSWERS = tuple(
    "Symptom: the {model} {family} {symptom} and reports error {code}. Cause: " + cause
    + ". Resolution: " + resolution for cause, resolution in CAUSES)
PRODUCT_FILLERS = (
    "This article applies to {model} {family} units running firmware {fw} or earlier.",
    "Prerequisites: a scheduled maintenance window and the serial number of the {model}, "
    "printed on the rear panel.",
    "If the procedure does not complete, open a ticket with the service desk and attach the "
    "{model} diagnostic bundle.",
    "See also: the {model} technical specifications and the release notes of firmware {fw}.",
    "Change history: revised after firmware {fw} introduced a new administration console "
    "layout.",
)
CODE_LETTERS = np.array(list(string.ascii_uppercase), dtype=object)
CODE_NUMBERS = 9000  # codes A-1000 .. Z-9999

# Datasheet attributes: (sentence, keyword, unit, possible values)
SPEC_ATTRS = (
    ("Rated power draw of the {model} {family} is {value} W at full load.",
     "power consumption", "W", (6, 9, 12, 18, 25, 45)),
    ("The {model} weighs {value} g including the mounting bracket.",
     "weight", "g", (180, 350, 620, 1100, 1800, 2600)),
    ("The {model} operates at ambient temperatures of up to {value} °C.",
     "maximum operating temperature", "°C", (35, 40, 45, 50, 55)),
    ("The {model} carries a manufacturer warranty of {value} months.",
     "warranty period", "months", (12, 24, 36, 60)),
    ("Mean time between failures of the {model} is {value} hours.",
     "MTBF", "hours", (50_000, 80_000, 120_000, 200_000)),
)
MAX_CHUNKS = len(SPEC_ATTRS)  # a datasheet chunk per attribute, at most

# How-to pairs (names as in FAMILIES): variant 0 does it *with* something, variant 1
# *without* it. Per variant (keyword query, title, answer), then the negation queries, which
# ask for variant 1 and must not get variant 0.
PROCEDURE_NAMES = ("reset", "agent", "firmware", "pairing", "registration")
PROCEDURES = (
    ((("factory reset", "Factory reset of the {model} {family}",
       "A factory reset of the {model} erases all stored data and settings: hold the recessed "
       "button for 15 seconds until the indicator flashes amber."),
      ("soft reset", "Soft reset of the {model} {family}",
       "A soft reset of the {model} retains all stored data and settings: hold the recessed "
       "button for 3 seconds, then release it.")),
     ("reset {model} without erasing data", "{model} reset but not losing settings")),
    ((("agent installation", "Installing the management agent on the {model}",
       "Installing the management agent on the {model} requires local administrator rights: "
       "run the installer from an elevated prompt."),
      ("per-user agent installation", "Per-user agent installation on the {model}",
       "The per-user package installs the management agent on the {model} with standard "
       "user privileges: open the self-service portal and choose Install for me.")),
     ("install {model} agent without administrator rights",
      "{model} agent install not as admin")),
    ((("firmware update", "Firmware update of the {model} {family}",
       "Updating the firmware of the {model} requires a reboot: schedule the update outside "
       "business hours."),
      ("live patching", "Live patching of the {model} {family}",
       "Live patching updates the firmware of the {model} while it stays in service: enable "
       "hot patching in the administration console.")),
     ("update {model} firmware without a reboot", "{model} firmware update not needing a reboot")),
    ((("cable connection", "Connecting the {model} by cable",
       "Connect the {model} with the supplied USB cable and wait until the host enumerates "
       "it."),
      ("bluetooth pairing", "Pairing the {model} over Bluetooth",
       "Pair the {model} over Bluetooth: hold the pairing key until the indicator blinks "
       "blue.")),
     ("connect {model} without a cable", "{model} setup not using usb")),
    ((("registration", "Registering the {model} with IT",
       "Registering the {model} needs a support ticket approved by IT before first use."),
      ("self registration", "Self-registration of the {model}",
       "Self-registration of the {model} in the device portal needs no support ticket: scan "
       "the QR code on the device.")),
     ("register {model} without opening a ticket", "{model} registration not via a ticket")),
)

SERVICES = ("billing database", "payroll export job", "identity provider", "mail relay",
            "VPN concentrator", "backup vault", "build farm", "data warehouse")
# Runbook operations: (title, keyword query, answer)
OPERATIONS = (
    ("failover", "failover procedure",
     "Promote the standby replica of the {service}, repoint the service DNS record and page "
     "the on-call engineer."),
    ("credential rotation", "credential rotation",
     "Rotate the {service} service-account credentials in the secrets vault, then restart the "
     "dependent workers."),
    ("disk space exhaustion", "disk full",
     "When the {service} volume exceeds 90 percent, purge rotated logs and extend the volume "
     "by 20 percent."),
    ("certificate renewal", "certificate renewal",
     "Renew the {service} TLS certificate 14 days before expiry and reload the listener."),
    ("restore from snapshot", "restore from backup",
     "Restore the {service} from the latest snapshot, replay the transaction log and verify "
     "the checksums."),
)
GUEST_OPERATIONS = (0, 1)  # failover, credential rotation: words only runbooks use
SHARED_VOCABULARY_SERVICES = (SERVICES.index("data warehouse"),)  # "data" is in open docs
RUNBOOK_FILLERS = (
    "Owner: platform operations. Escalation: page the {service} on-call rotation and post in "
    "the incident channel.",
    "Preconditions: an approved change ticket and a maintenance window announced on the "
    "status page.",
    "Rollback: revert the {service} to the previous configuration snapshot and confirm that "
    "health checks pass.",
    "Monitoring: the {service} dashboard shows replication lag, error rate and saturation.",
)
ABSENT_TOPICS = ("parking permit renewal", "cafeteria opening hours", "company holiday calendar",
                 "relocation allowance", "gym membership discount", "bike lease scheme")

# Article kinds and their shares; acl codes index ACLS.
TROUBLE, SPEC, HOWTO, RUNBOOK = range(4)
KIND_SHARES = (0.35, 0.15, 0.30, 0.20)
ACLS = ((), ("staff",), ("admin",))
OPEN, STAFF, ADMIN = range(3)
INTERNAL_TROUBLE_SHARE, ADMIN_RUNBOOK_SHARE = 0.15, 0.2
STATUS_SHARES = (0.88, 0.04, 0.04, 0.04)  # in the order of S.STATUSES
PUBLISHED, DELETED = S.STATUSES.index("published"), S.STATUSES.index("deleted")

# Query kinds (index = code) and their shares; the kind is also the tag, except "plain".
QUERY_KINDS = ("plain", "error_code", "numeric", "paraphrase", "typo", "negation",
               "authz_boundary", "no_answer")
QUERY_SHARES = (0.24, 0.14, 0.10, 0.14, 0.10, 0.08, 0.10, 0.10)
(PLAIN, ERROR_CODE, NUMERIC, PARAPHRASE, TYPO, NEGATION, AUTHZ, NO_ANSWER) = range(8)
AUTHZ_TAG = QUERY_KINDS[AUTHZ]
PLAIN_QUERY = ("{model} {symptom_kw}", "{model} specifications", "{model} {proc_kw}",
               "{service} {op_kw}")  # by article kind: TROUBLE, SPEC, HOWTO, RUNBOOK
QUERY_TEMPLATES = {
    ERROR_CODE: ("{code}", "error {code} on {model}", "{model} {code} {symptom_kw}"),
    NUMERIC: ("{model} {attr_kw}", "is the {model} {attr_kw} {value} {unit}?"),
    PARAPHRASE: ("my {family_c} {symptom_c}",
                 "the {family_c} {symptom_c} again, any idea how to fix?",
                 "{family_c} {symptom_c} - what do i do"),
    NO_ANSWER: ("{absent}", "{absent_model} {symptom_kw}"),
}
HEAD_SHARE = 0.3  # share of logged queries that repeat a head query
FUTURE_SHARE = 0.02  # share of queries issued before their answer was published

GUEST, EMPLOYEE = S.ROLES.index("guest"), S.ROLES.index("employee")
ADMIN_ROLE = S.ROLES.index("admin")
ROLE_SHARES = (0.3, 0.6, 0.1)  # guest, employee, admin
TEAMS = ("support", "sales", "engineering", "finance")

_FORMAT = string.Formatter()


@dataclass(frozen=True)
class DemoData:
    """Generated tables: documents and queries (contract columns), hidden ground truth
    (query_id, doc_id, grade) and the must_not_return pairs (query_id, doc_id, reason)."""

    documents: pd.DataFrame
    queries: pd.DataFrame
    ground_truth: pd.DataFrame
    must_not_return: pd.DataFrame


def _text(values, width: int = 0) -> np.ndarray:
    """Any array as an object array of Python str (the operand type of ``_fill``), optionally
    zero-padded to ``width``."""
    return np.char.zfill(np.asarray(values).astype(str), width).astype(object)


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

    Every keyword query of a troubleshooting note or how-to has such a word (vocabulary above).
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
    """For each family, a random index into ``names`` among those ``FAMILIES[f][field]`` lists."""
    options = [[names.index(x) for x in f[field]] for f in FAMILIES]
    table = np.array([o + o[:1] * (len(names) - len(o)) for o in options])
    count = np.array([len(o) for o in options])
    return table[family, (rng.random(len(family)) * count[family]).astype(int)]


def _utc(seconds: np.ndarray) -> pd.Series:
    """Seconds since the epoch as UTC timestamps."""
    return pd.Series(pd.to_datetime(seconds, unit="s", utc=True))


def _strings(values) -> pd.Series:
    """A column of pandas' string dtype."""
    return pd.Series(values, dtype="str")


def _sources(rng: np.random.Generator, n_docs: int, tenants: int, t0: int, t1: int) -> dict:
    """Articles, one entry per article: kind, attributes, status, times and chunk layout
    (``first`` chunk, ``n_chunks``, ``answer`` = position of the chunk holding the answer)."""
    n_chunks = np.clip(1 + rng.poisson(2.2, n_docs), 1, MAX_CHUNKS)
    ends = np.cumsum(n_chunks)
    n = int(np.searchsorted(ends, n_docs)) + 1
    n_chunks = n_chunks[:n]
    n_chunks[-1] -= ends[n - 1] - n_docs
    kind = _allocate(rng, n, KIND_SHARES)
    howto = np.flatnonzero(kind == HOWTO)
    kind[howto[len(howto) // 2 * 2:]] = TROUBLE  # how-tos come in pairs
    howto = howto[: len(howto) // 2 * 2]
    tenant_p = 1 / np.arange(1, tenants + 1)
    tenant = rng.choice(tenants, n, p=tenant_p / tenant_p.sum())

    n_models = int(np.clip(n // 5, 20, len(FAMILIES) * 2 * MODEL_NUMBERS))
    model_ids = rng.choice(len(FAMILIES) * 2 * MODEL_NUMBERS, n_models, replace=False)
    model = rng.integers(n_models, size=n)
    pair = np.full(n, -1)
    pair[howto] = np.arange(len(howto)) // 2
    variant = np.zeros(n, int)
    variant[howto[1::2]] = 1
    twin = howto[0::2].repeat(2)  # both how-tos of a pair share tenant, model and procedure
    tenant[howto], model[howto] = tenant[twin], model[twin]
    mid = model_ids[model]
    family = mid // (2 * MODEL_NUMBERS)
    proc = _choose(rng, family, 4, PROCEDURE_NAMES)
    proc[howto] = proc[twin]

    acl = np.full(n, OPEN)
    acl[(kind == TROUBLE) & (rng.random(n) < INTERNAL_TROUBLE_SHARE)] = STAFF
    runbook_acl = np.where(rng.random(n) < ADMIN_RUNBOOK_SHARE, ADMIN, STAFF)
    acl[kind == RUNBOOK] = runbook_acl[kind == RUNBOOK]
    acl[np.argmax(kind == RUNBOOK)] = STAFF
    status = rng.choice(len(S.STATUSES), n, p=STATUS_SHARES)
    for needed in (kind == TROUBLE, kind == SPEC, variant == 1, (kind == RUNBOOK) & (acl == STAFF)):
        status[np.argmax(needed)] = PUBLISHED  # every kind of query has an answer to ask for
    published = rng.integers(t0, t1, size=n)
    deleted = np.where(status == DELETED, published + rng.integers(86_400, 120 * 86_400, n), -1)

    trouble = np.flatnonzero(kind == TROUBLE)
    codes = rng.choice(len(CODE_LETTERS) * CODE_NUMBERS, len(trouble), replace=False)
    code = np.full(n, "", dtype=object)
    code[trouble] = CODE_LETTERS[codes // CODE_NUMBERS] + "-" + _text(1000 + codes % CODE_NUMBERS)
    prefixes = np.array([p for f in FAMILIES for p in f[2]], dtype=object)
    fw = (_text(rng.integers(1, 6, n)) + "." + _text(rng.integers(0, 10, n)) + "."
          + _text(rng.integers(0, 20, n)))
    values = np.stack([np.array(a[3])[rng.integers(len(a[3]), size=n)] for a in SPEC_ATTRS], 1)
    return dict(
        n=n, kind=kind, tenant=tenant, acl=acl, status=status, published=published,
        deleted=deleted, n_chunks=n_chunks, first=np.cumsum(n_chunks) - n_chunks,
        answer=(rng.random(n) * n_chunks).astype(int), model_index=model,
        model=prefixes[mid // MODEL_NUMBERS] + "-" + _text(100 + mid % MODEL_NUMBERS),
        family=family, code=code, fw=fw, values=values,
        symptom=_choose(rng, family, 3, SYMPTOM_NAMES), cause=rng.integers(len(CAUSES), size=n),
        pair=pair, variant=variant,
        proc=proc, service=rng.integers(len(SERVICES), size=n),
        operation=rng.integers(len(OPERATIONS), size=n),
        attr_offset=rng.integers(len(SPEC_ATTRS), size=n))


def _column(table, index: np.ndarray, item: int | None = None) -> np.ndarray:
    """``table[i][item]`` (or ``table[i]``) for each i in index, as an object array."""
    values = [row if item is None else row[item] for row in table]
    return np.array(values, dtype=object)[index]


def _howto(item: int) -> np.ndarray:
    """Item (0 keyword, 1 title, 2 answer) of each how-to variant, indexed proc * 2 + variant."""
    return np.array([v[item] for p in PROCEDURES for v in p[0]], dtype=object)


def _documents(src: dict, names: np.ndarray) -> tuple[pd.DataFrame, np.ndarray]:
    """The documents table (one row per chunk) and its doc_id array."""
    n, kind = src["n"], src["kind"]
    source_id = names[src["tenant"]] + "-kb" + _text(np.arange(n), 5)
    fields = dict(model=src["model"], family=_column(FAMILIES, src["family"], 0),
                  symptom=_column(SYMPTOMS, src["symptom"], 0),
                  symptom_title=_column(SYMPTOMS, src["symptom"], 1), code=src["code"],
                  fw=src["fw"],
                  service=_column(SERVICES, src["service"]),
                  op_title=_column(OPERATIONS, src["operation"], 0))
    how = src["proc"] * 2 + src["variant"]
    title = np.select(
        [kind == TROUBLE, kind == SPEC, kind == HOWTO],
        [np.full(n, "{model} {family}: {symptom_title}", dtype=object),
         np.full(n, "{model} {family} technical specifications", dtype=object), _howto(1)[how]],
        np.full(n, "Runbook: {service} {op_title}", dtype=object))
    title = _fill(title, fields)

    of = np.repeat(np.arange(n), src["n_chunks"])
    pos = np.arange(len(of)) - src["first"][of]
    answer, ckind = pos == src["answer"][of], kind[of]
    attr = (src["attr_offset"][of] + pos) % len(SPEC_ATTRS)
    filler = pos + of
    template = np.select(
        [ckind == SPEC, answer & (ckind == TROUBLE), answer & (ckind == HOWTO),
         answer & (ckind == RUNBOOK), ckind == RUNBOOK],
        [_column(SPEC_ATTRS, attr, 0), _column(TROUBLE_ANSWERS, src["cause"][of]),
         _howto(2)[how[of]], _column(OPERATIONS, src["operation"][of], 2),
         _column(RUNBOOK_FILLERS, filler % len(RUNBOOK_FILLERS))],
        _column(PRODUCT_FILLERS, filler % len(PRODUCT_FILLERS)))
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
        S.ACL: [list(ACLS[a]) for a in src["acl"][of]]})
    return documents, doc_id


def _users(rng: np.random.Generator, n_queries: int, names: np.ndarray) -> dict:
    """Users per tenant, each role at least once: id, tenant, role and groups."""
    per = max(len(S.ROLES), n_queries // (4 * len(names)))
    tenant = np.repeat(np.arange(len(names)), per)
    role = rng.choice(len(S.ROLES), (len(names), per), p=ROLE_SHARES)
    role[:, : len(S.ROLES)] = np.arange(len(S.ROLES))
    role = role.ravel()
    team = _column(TEAMS, rng.integers(len(TEAMS), size=len(role)))
    groups = [("public",) if r == GUEST else ("staff", "admin") if r == ADMIN_ROLE
              else ("staff", t) for r, t in zip(role, team, strict=True)]
    user_id = names[tenant] + "-u" + _text(np.tile(np.arange(per), len(names)), 4)
    return dict(tenant=tenant, role=role, groups=groups, user_id=user_id)


def _intents(rng: np.random.Generator, src: dict, n_queries: int, t0: int, t1: int) -> dict:
    """Distinct queries: kind, target article (-1: none), first issue time, repetitions.

    Intent 0 is the guest's question answered only by an internal (acl staff) runbook."""
    head_rows = int(HEAD_SHARE * n_queries)
    repeats = np.minimum(1 + rng.geometric(0.25, size=head_rows), head_rows)
    n_head = int(np.searchsorted(np.cumsum(repeats), head_rows, side="right"))
    n_tail = n_queries - int(repeats[:n_head].sum())
    repeats = np.concatenate([[1], repeats[:n_head], np.ones(n_tail - 1, int)])
    n = len(repeats)
    kind = np.concatenate([[AUTHZ], _allocate(rng, n - 1, QUERY_SHARES)])
    at = rng.integers(t0 + (t1 - t0) // 24, t1, size=n)
    future = rng.random(n) < FUTURE_SHARE
    future[0] = False

    published, skind = src["published"], src["kind"]
    live = src["status"] == PUBLISHED
    pools = {PLAIN: live, ERROR_CODE: live & (skind == TROUBLE), NUMERIC: live & (skind == SPEC),
             PARAPHRASE: live & (skind == TROUBLE),
             TYPO: live & ((skind == TROUBLE) | (skind == HOWTO)),
             NEGATION: live & (skind == HOWTO) & (src["variant"] == 1),
             AUTHZ: live & (src["acl"] != OPEN)}
    target = np.full(n, -1)
    for k, pool in pools.items():
        rows = np.flatnonzero(kind == k)
        target[rows] = _pick(rng, np.flatnonzero(pool), published, at[rows], future[rows])
    # the guest's runbook: service and operation words that no open document uses
    private = np.isin(src["operation"], GUEST_OPERATIONS) & ~np.isin(
        src["service"], SHARED_VOCABULARY_SERVICES)
    staff = live & (skind == RUNBOOK) & (src["acl"] == STAFF)
    staff_runbooks = np.flatnonzero(staff & private if (staff & private).any() else staff)
    target[0] = _pick(rng, staff_runbooks, published, np.array([t1]), np.array([False]))[0]
    at[0] = published[target[0]] + int(rng.random() * (t1 - published[target[0]]))
    return dict(n=n, kind=kind, target=target, at=at, repeats=repeats)


def _query_text(rng: np.random.Generator, src: dict, intents: dict) -> np.ndarray:
    """The text of each intent, from its kind's templates and its target article."""
    n, kind, target = intents["n"], intents["kind"], intents["target"]
    t = np.maximum(target, 0)
    template = _column(PLAIN_QUERY, src["kind"][t])  # plain, typo, authz_boundary
    for k, choices in QUERY_TEMPLATES.items():
        rows = np.flatnonzero(kind == k)
        template[rows] = _column(choices, rng.integers(len(choices), size=len(rows)))
    template[0] = "{service} {op_title}"  # the guest's runbook question (intent 0)
    negation = np.flatnonzero(kind == NEGATION)
    template[negation] = np.array([p[1] for p in PROCEDURES], dtype=object)[
        src["proc"][t[negation]], rng.integers(2, size=len(negation))]

    attr = (src["attr_offset"][t] + src["answer"][t]) % len(SPEC_ATTRS)
    symptom = np.where(target >= 0, src["symptom"][t], rng.integers(len(SYMPTOMS), size=n))
    fields = dict(
        model=src["model"][t], code=src["code"][t], symptom_kw=_column(SYMPTOMS, symptom, 2),
        symptom_c=_column(SYMPTOMS, symptom, 3), family_c=_column(FAMILIES, src["family"][t], 1),
        attr_kw=_column(SPEC_ATTRS, attr, 1), unit=_column(SPEC_ATTRS, attr, 2),
        value=_text(src["values"][t, attr]),
        proc_kw=_howto(0)[src["proc"][t] * 2 + src["variant"][t]],
        service=_column(SERVICES, src["service"][t]),
        op_kw=_column(OPERATIONS, src["operation"][t], 1),
        op_title=_column(OPERATIONS, src["operation"][t], 0),
        absent=_column(ABSENT_TOPICS, rng.integers(len(ABSENT_TOPICS), size=n)),
        absent_model=ABSENT_PREFIX + "-" + _text(rng.integers(100, 1000, size=n)))
    text = _fill(template, fields)
    typo = np.flatnonzero(kind == TYPO)
    text[typo] = _misspell(rng, text[typo])
    return text


def _queries(rng: np.random.Generator, src: dict, n_queries: int, names: np.ndarray,
             t0: int, t1: int) -> tuple[pd.DataFrame, np.ndarray]:
    """The query log (sorted by issued_at) and each row's target article (-1: none)."""
    intents = _intents(rng, src, n_queries, t0, t1)
    text = _query_text(rng, src, intents)
    of = np.repeat(np.arange(intents["n"]), intents["repeats"])
    repeats, target, kind = intents["repeats"][of], intents["target"][of], intents["kind"][of]
    first = np.arange(len(of)) == (np.cumsum(intents["repeats"]) - intents["repeats"])[of]
    at = intents["at"][of]
    issued = np.where(first, at, at + (rng.random(len(of)) * (t1 - at)).astype(np.int64))

    tenant_p = 1 / np.arange(1, len(names) + 1)
    intent_tenant = np.where(intents["target"] >= 0, src["tenant"][np.maximum(
        intents["target"], 0)], rng.choice(len(names), intents["n"], p=tenant_p / tenant_p.sum()))
    tenant = intent_tenant[of]
    acl = np.where(target >= 0, src["acl"][np.maximum(target, 0)], OPEN)
    u = rng.random(len(of))
    authz = kind == AUTHZ
    role = np.select(
        [authz & (acl == STAFF), authz, acl == STAFF, acl == ADMIN],
        [GUEST, np.where(u < 0.5, GUEST, EMPLOYEE), np.where(u < 0.85, EMPLOYEE, ADMIN_ROLE),
         ADMIN_ROLE],
        np.searchsorted(np.cumsum(ROLE_SHARES), u * 0.999999))

    users = _users(rng, n_queries, names)
    order = np.lexsort((users["role"], users["tenant"]))
    keys = (users["tenant"] * len(S.ROLES) + users["role"])[order]
    key = tenant * len(S.ROLES) + role
    lo, hi = np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right")
    user = order[lo + (rng.random(len(of)) * (hi - lo)).astype(int)]

    head = repeats > 1
    tag_lists = [[h] + ([k] if k != "plain" else []) for h in ("tail", "head")
                 for k in QUERY_KINDS]
    weight = np.where(head, repeats * rng.uniform(0.8, 1.2, len(of)),
                      rng.uniform(0.2, 1.0, len(of))).round(3)
    queries = pd.DataFrame({
        S.QUERY_ID: _strings("q" + _text(np.arange(len(of)), 6)),
        S.TEXT: _strings(text[of]), S.ISSUED_AT: _utc(issued),
        S.USER_ID: _strings(users["user_id"][user]), S.TENANT: _strings(names[tenant]),
        S.GROUPS: [list(users["groups"][i]) for i in user],
        S.ROLE: _strings(np.array(S.ROLES)[role]),
        S.TAGS: [list(tag_lists[i]) for i in head * len(QUERY_KINDS) + kind],
        S.WEIGHT: weight})
    order = np.argsort(issued, kind="stable")
    return queries.iloc[order].reset_index(drop=True), target[order]


def _ground_truth(src: dict, query_ids: pd.Series, target: np.ndarray,
                  doc_id: np.ndarray) -> pd.DataFrame:
    """Graded relevance of each query row with a target article (see the module docstring)."""
    tenant, kind, runbook = src["tenant"], src["kind"], src["kind"] == RUNBOOK
    acl = np.where(runbook, src["acl"], 0)
    topic = np.where(runbook, src["service"], src["model_index"])
    rel_prev, rel_next = _neighbours(np.stack([tenant, runbook, topic, acl], 1))
    near_key = np.select([kind == TROUBLE, kind == SPEC, kind == HOWTO],
                         [src["symptom"], src["family"], src["pair"]], src["operation"])
    prev, nxt = _neighbours(np.stack([tenant, kind, near_key, acl], 1))
    near = np.where(prev >= 0, prev, nxt)
    answer_chunk = src["first"] + src["answer"]

    rows = np.flatnonzero(target >= 0)
    t = target[rows]
    reps = src["n_chunks"][t]
    offset = np.arange(reps.sum()) - np.repeat(np.cumsum(reps) - reps, reps)
    parts = [(np.repeat(rows, reps), np.repeat(src["first"][t], reps) + offset,
              np.where(offset == np.repeat(src["answer"][t], reps), 3, 2))]
    for related in (rel_prev[t], rel_next[t]):
        ok = (related >= 0) & (related != near[t])
        parts.append((rows[ok], answer_chunk[related[ok]], np.ones(ok.sum(), int)))
    ok = near[t] >= 0
    parts.append((rows[ok], answer_chunk[near[t][ok]], np.zeros(ok.sum(), int)))
    row, chunk, grade = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.lexsort((chunk, -grade, row))
    return pd.DataFrame({S.QUERY_ID: _strings(query_ids.to_numpy()[row[order]]),
                         S.DOC_ID: _strings(doc_id[chunk[order]]),
                         S.GRADE: grade[order].astype(np.int64)})


def _must_not_return(documents: pd.DataFrame, queries: pd.DataFrame,
                     truth: pd.DataFrame) -> pd.DataFrame:
    """The ground-truth documents of each ``authz_boundary`` query that it may not see, with
    the reason (module docstring)."""
    tags = queries[S.TAGS].explode()
    authz = queries[S.QUERY_ID].isin(queries.loc[tags.index[tags == AUTHZ_TAG], S.QUERY_ID])
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
             months: int = 12, tenants: int = 2) -> DemoData:
    """A demo knowledge base of ``n_docs`` chunks, a log of ``n_queries`` queries and their
    ground truth, published and issued over ``months`` months from ``start`` (UTC), split
    over ``tenants`` tenants. Deterministic in all arguments; see the module docstring.

    Needs n_docs ≥ 50, n_queries ≥ 20 (so every kind of article and query occurs),
    months ≥ 1 and 1 ≤ tenants ≤ 8; raises ValueError otherwise.
    """
    if n_docs < MIN_DOCS or n_queries < MIN_QUERIES or months < 1 \
            or not 1 <= tenants <= len(TENANT_NAMES):
        raise ValueError(f"need n_docs >= {MIN_DOCS}, n_queries >= {MIN_QUERIES}, months >= 1 "
                         f"and 1 <= tenants <= {len(TENANT_NAMES)}; got {n_docs}, {n_queries}, "
                         f"{months}, {tenants}")
    rng = np.random.default_rng(seed)
    begin = pd.Timestamp(start)
    begin = begin.tz_localize("UTC") if begin.tzinfo is None else begin.tz_convert("UTC")
    t0, t1 = int(begin.timestamp()), int((begin + pd.DateOffset(months=months)).timestamp())
    names = np.array(TENANT_NAMES[:tenants], dtype=object)
    src = _sources(rng, n_docs, tenants, t0, t1)
    documents, doc_id = _documents(src, names)
    queries, target = _queries(rng, src, n_queries, names, t0, t1)
    truth = _ground_truth(src, queries[S.QUERY_ID], target, doc_id)
    return DemoData(documents, queries, truth, _must_not_return(documents, queries, truth))


def simulate_external_run(data: DemoData, seed: int = 0, depth: int = 100,
                          system: str = "prod_v2") -> pd.DataFrame:
    """A seeded stand-in for a team's own retrained system, for the demo only.

    Per query: 70% of its ground-truth documents scored by grade plus noise (so it is good
    but imperfect), padded to ``depth`` with random documents of the query's tenant already
    published at the query's time, scored below them. It ignores status and ACLs on purpose,
    as a buggy production system might, so the external route's visibility flags have
    something to find. Columns: query_id,
    doc_id, score, system (write it as a TREC run).
    """
    rng = np.random.default_rng(seed + 7919)
    truth = data.ground_truth.merge(data.queries[[S.QUERY_ID]], on=S.QUERY_ID)
    truth = truth[rng.random(len(truth)) >= 0.3]  # it misses some answers entirely
    relevant = truth.assign(score=truth[S.GRADE] + rng.normal(0.0, 1.6, len(truth)))
    docs = data.documents.sort_values(S.PUBLISHED_AT, kind="stable").reset_index(drop=True)
    queries = data.queries[[S.QUERY_ID, S.TENANT, S.ISSUED_AT]]
    filler = []
    for tenant, group in queries.groupby(S.TENANT):  # one vectorised draw per tenant
        pool = docs.index[docs[S.TENANT] == tenant].to_numpy()
        # documents published by the query's time (status and ACL deliberately ignored)
        published = docs[S.PUBLISHED_AT].to_numpy()[pool]
        n_before = np.searchsorted(published, group[S.ISSUED_AT].to_numpy(), side="right")
        picks = np.floor(rng.random((len(group), depth)) * np.maximum(n_before, 1)[:, None])
        filler.append(pd.DataFrame({
            S.QUERY_ID: np.repeat(group[S.QUERY_ID].to_numpy(), depth),
            S.DOC_ID: docs[S.DOC_ID].to_numpy()[pool[picks.astype(np.int64).ravel()]],
            S.SCORE: rng.uniform(-3.0, 0.5, len(group) * depth)}))
    run = pd.concat([relevant[[S.QUERY_ID, S.DOC_ID, S.SCORE]], *filler], ignore_index=True)
    run = run.sort_values([S.QUERY_ID, S.SCORE], ascending=[True, False], kind="stable")
    run = run.drop_duplicates([S.QUERY_ID, S.DOC_ID]).groupby(S.QUERY_ID).head(depth)
    return run.assign(**{S.SCORE: run[S.SCORE].round(6), S.SYSTEM: system}).reset_index(
        drop=True)
