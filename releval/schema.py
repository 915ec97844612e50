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
