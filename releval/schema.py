"""Column names of the data contracts (DESIGN.md), shared by code, tests and suites."""

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
QRELS_COLUMNS = (QUERY_ID, DOC_ID, GRADE)
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
TAG_VALUES = ("head", "tail", "no_answer", "authz_boundary", "typo", "error_code", "paraphrase",
              "numeric", "negation")

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
