"""The demo generator's vocabulary (``releval.demo.generator``): the word and template tables
its documents and queries are written from, the codes of article, query, access and role
kinds, and the shares it draws them with.
"""

from __future__ import annotations

import string

import numpy as np

from releval.data import contracts as S

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
TROUBLE_TITLE = "{model} {family}: {symptom_title}"
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

# Near-duplicates (hard negatives): a troubleshooting note's answer chunk copied into a note of
# its own that names a wrong model number, and for a share of them a wrong error code too. A
# wrong number is 1..NEAR_STEPS steps above the right one (wrapping within its prefix or
# letter), or the next one up that no article uses.
NEAR_DUPLICATE_SHARE = 0.1  # of troubleshooting articles
WRONG_CODE_SHARE = 0.5  # of near-duplicates
NEAR_STEPS, NEAR_TRIES = 9, 64

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

# Sampling source (S.QUERY_SOURCES): the probes of these kinds are written to templates, every
# other query is sampled from logged traffic.
TEMPLATE_KINDS = (ERROR_CODE, AUTHZ, NO_ANSWER)

# High-risk queries (tags S.HIGH_RISK_TAG and the domain, one of S.RISK_DOMAINS): a wrong
# answer does harm. The domain follows what the text names: a runbook's service or operation,
# a symptom (by SYMPTOM_NAMES), else the second request of a multi-intent query.
SERVICE_RISK = {"billing database": "finance", "payroll export job": "finance",
                "identity provider": "authorization", "VPN concentrator": "authorization"}
OPERATION_RISK = {"credential rotation": "authorization"}  # by OPERATIONS title
SYMPTOM_RISK = {"heat": "safety"}
# Multi-intent queries (tag S.MULTI_INTENT_TAG): a MULTI_INTENT_SHARE of the plain answerable
# queries ask a second thing after MULTI_INTENT_JOIN, one the knowledge base does not answer
# (no word of it is in any document, so the ground truth stays that of the first request):
# (request, risk domain or "").
MULTI_INTENT_SHARE = 0.25
MULTI_INTENT_JOIN = " and also "
SECOND_REQUESTS = (("parking permit", ""), ("cafeteria menu", ""),
                   ("expense claim refund", "finance"), ("salary advance", "finance"),
                   ("sick leave medical note", "medical"), ("battery burn injury", "medical"))

GUEST, EMPLOYEE = S.ROLES.index("guest"), S.ROLES.index("employee")
ADMIN_ROLE = S.ROLES.index("admin")
ROLE_SHARES = (0.3, 0.6, 0.1)  # guest, employee, admin
TEAMS = ("support", "sales", "engineering", "finance")
