"""is-sql and contains-sql: promptfoo's verdicts, `databaseType`, `allowedTables`, `allowedColumns`.

The expected verdicts in PROMPTFOO were observed on promptfoo 0.121.20 (node-sql-parser 5.4.0): its is-sql /
contains-sql handler, taken verbatim from its dist bundle, run on each row (and spot-checked with
`promptfoo eval` on the echo provider, tests/compat/configs/sql.yaml). evalrun must give the same pass/fail.
"""

from __future__ import annotations

import pytest

from evalrun.assertions.sql import columns, judge_sql, parse_rules, statements, tables
from tests.test_assertions_helpers import bad, run


def T(*entries: str) -> dict[str, list[str]]:
    return {"allowedTables": list(entries)}


def C(*entries: str) -> dict[str, list[str]]:
    return {"allowedColumns": list(entries)}


PROMPTFOO = [
    # comma joins
    ("is-sql", "SELECT * FROM a, b JOIN c ON b.id = c.id", T("select::null::a", "select::null::c"), False),
    ("is-sql", "SELECT * FROM a, b JOIN c ON b.id = c.id", T("select::null::a", "select::null::b", "select::null::c"), True),
    ("is-sql", "SELECT * FROM a, c WHERE a.id = c.id", T("select::null::a", "select::null::c"), True),
    ("is-sql", "SELECT * FROM t1, t2, t3 WHERE t1.a = t2.a", T("select::null::t1", "select::null::t2"), False),
    # subqueries
    ("is-sql", "SELECT x FROM a WHERE id IN (SELECT aid FROM b)", T("select::null::a"), False),
    ("is-sql", "SELECT x FROM a WHERE id IN (SELECT aid FROM b)", T("select::null::a", "select::null::b"), True),
    ("is-sql", "SELECT s.id FROM (SELECT id FROM secrets) AS s", T("select::null::s"), False),
    ("is-sql", "SELECT id FROM a WHERE EXISTS (SELECT 1 FROM b WHERE b.aid = a.id)", T("select::null::a"), False),
    ("is-sql", "SELECT (SELECT MAX(x) FROM b) AS m FROM a", T("select::null::a"), False),
    # CTEs (the CTE name is listed as a table)
    ("is-sql", "WITH t AS (SELECT id FROM a) SELECT id FROM t", T("select::null::a"), False),
    ("is-sql", "WITH t AS (SELECT id FROM a) SELECT id FROM t", T("select::null::a", "select::null::t"), True),
    ("is-sql", "WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r", T("select::null::r"), True),
    # UNION
    ("is-sql", "SELECT id FROM a UNION SELECT id FROM b", T("select::null::a"), False),
    ("is-sql", "SELECT id FROM a UNION ALL SELECT id FROM b ORDER BY id", T("select::null::a", "select::null::b"), True),
    ("is-sql", "SELECT a FROM t1 INTERSECT SELECT a FROM t2", {"databaseType": "PostgreSQL", "allowedTables": ["select::null::t1"]}, False),
    # aliases
    ("is-sql", "SELECT u.name FROM users AS u JOIN orders o ON o.uid = u.id", T("select::null::users", "select::null::orders"), True),
    ("is-sql", "SELECT u.name FROM users AS u JOIN orders o ON o.uid = u.id", T("select::null::u", "select::null::o"), False),
    ("is-sql", "SELECT u.name FROM users AS u", C("select::users::name"), True),
    ("is-sql", "SELECT u.name FROM users AS u", C("select::u::name"), False),
    ("is-sql", "SELECT t1.a FROM t AS t1, t AS t2 WHERE t1.id = t2.pid", C("select::t::.*"), True),
    # quoted names
    ("is-sql", "SELECT `my col` FROM `my table`", T("select::null::my table"), True),
    ("is-sql", "SELECT `my col` FROM `my table`", C("select::null::my col"), True),
    ("is-sql", "SELECT \"my col\" FROM \"my table\"", {"databaseType": "PostgreSQL", "allowedTables": ["select::null::my table"]}, True),
    ("is-sql", "SELECT [col] FROM [tab]", {"databaseType": "TransactSQL", "allowedTables": ["select::null::tab"]}, True),
    ("is-sql", "SELECT `a FROM t", None, False),
    # case
    ("is-sql", "select ID from USERS", T("select::null::users"), True),
    ("is-sql", "SELECT id FROM users", T("SELECT::NULL::USERS"), True),
    ("is-sql", "SELECT Id FROM Users", C("select::null::id"), True),
    # schema-qualified
    ("is-sql", "SELECT id FROM shop.users", T("select::null::users"), False),
    ("is-sql", "SELECT id FROM shop.users", T("select::shop::users"), True),
    ("is-sql", "SELECT id FROM shop.users", T("select::.*::users"), True),
    ("is-sql", "SELECT id FROM `shop`.`users`", T("select::shop::users"), True),
    ("is-sql", "SELECT id FROM public.users", {"databaseType": "PostgreSQL", "allowedTables": ["select::public::users"]}, True),
    ("is-sql", "SELECT id FROM db.sch.users", {"databaseType": "TransactSQL", "allowedTables": ["select::db.sch::users"]}, True),
    ("is-sql", "SELECT t.id FROM shop.t", C("select::t::id"), True),
    # operations and regex entries
    ("is-sql", "INSERT INTO t (a, b) SELECT x, y FROM s", T("insert::null::t", "select::null::s"), True),
    ("is-sql", "INSERT INTO t (a, b) SELECT x, y FROM s", T("select::null::t", "select::null::s"), False),
    ("is-sql", "UPDATE t SET a = 1 WHERE b = 2", T("(select|update)::null::t"), True),
    ("is-sql", "DELETE FROM t WHERE id = 3", T("(select|update)::null::t"), False),
    ("is-sql", "DELETE FROM t WHERE id = 3", T("(select|insert|update|delete)::.*::t"), True),
    ("is-sql", "SELECT id FROM t1; DROP TABLE t2", T("select::null::t1"), False),
    ("is-sql", "SELECT id FROM t1; DROP TABLE t2", T("select::null::t1", "drop::null::t2"), True),
    ("is-sql", "SELECT 1", T("select::null::orders"), True),
    ("is-sql", "SELECT * FROM orders", T(".*"), True),
    # allowedColumns
    ("is-sql", "SELECT * FROM users", C("select::null::id"), False),
    ("is-sql", "SELECT * FROM users", C("select::null::.*"), True),
    ("is-sql", "SELECT id, name FROM users", C("select::users::id", "select::users::name"), True),
    ("is-sql", "SELECT id, email FROM users", C("select::users::id", "select::users::name"), False),
    ("is-sql", "SELECT id FROM users WHERE email = 'x'", C("select::null::id"), False),
    ("is-sql", "SELECT COUNT(*) FROM users", C("select::null::id"), True),
    ("is-sql", "SELECT 'hello' FROM users", C("select::null::id"), False),
    ("is-sql", "UPDATE users SET name = 'x' WHERE id = 1", C("select::null::id", "update::null::name"), True),
    ("is-sql", "UPDATE users SET name = 'x' WHERE id = 1", C("select::null::id", "select::null::name"), False),
    ("is-sql", "INSERT INTO users (id, name) VALUES (1, 'a')", C("insert::users::(id|name)"), True),
    ("is-sql", "SELECT id FROM users", {"allowedTables": ["select::null::users"], "allowedColumns": ["select::null::name"]}, False),
    # invalid SQL and prose
    ("is-sql", "SELEC id FROM users", None, False),
    ("is-sql", "SELECT id name FROM users", None, False),
    ("is-sql", "SELECT id, FROM users", None, False),
    ("is-sql", "SELECT 'unterminated FROM users", None, False),
    ("is-sql", "SELECT (a FROM users", None, False),
    ("is-sql", "SELECT id FROM users GROUP BY", None, False),
    ("is-sql", "SELECT a FROM t WHERE b IN ()", None, False),
    ("is-sql", "INSERT INTO t (a) VALUES (1,)", None, False),
    ("is-sql", "SELECT a FROM t JOIN u ON", None, False),
    ("is-sql", "UPDATE t SET", None, False),
    ("is-sql", "DELETE users WHERE id = 1", None, False),
    ("is-sql", "SELECT * FROM generate_series(1, 3)", None, False),
    ("is-sql", "SELECT ARRAY[1, 2]", None, False),
    ("is-sql", "", None, False),
    ("is-sql", "Here is the query", None, False),
    ("is-sql", "hello world", None, False),
    ("is-sql", "Use: the query", None, False),
    ("is-sql", "Show me the data", None, False),
    ("is-sql", "Create a table for users", None, False),
    ("is-sql", "Delete the file", None, False),
    ("is-sql", "Insert coin", None, False),
    ("is-sql", "Explain this", None, False),
    ("is-sql", "Commit to it", None, False),
    ("is-sql", "FROM t SELECT a", None, False),
    # valid MySQL (the default)
    ("is-sql", "SELECT id, name FROM users WHERE age > 21 ORDER BY name LIMIT 10", None, True),
    ("is-sql", "select * from `orders` o join users u on o.uid = u.id;", None, True),
    ("is-sql", "SHOW TABLES", None, True),
    ("is-sql", "USE shop", None, True),
    ("is-sql", "DESCRIBE users", None, True),
    ("is-sql", "SET x = 1", None, True),
    ("is-sql", "CALL p(1)", None, True),
    ("is-sql", "COMMIT", None, True),
    ("is-sql", "UPDATE users SET name = 'a' WHERE id = 1; DELETE FROM logs", None, True),
    ("is-sql", "SELECT a::int FROM t FOR UPDATE", None, True),
    ("is-sql", "INSERT INTO t SET a = 1", None, True),
    ("is-sql", "SELECT a FROM t WHERE a = ANY (SELECT b FROM u)", None, True),
    ("is-sql", "SELECT a FROM t LIMIT 1, 2", None, True),
    ("is-sql", "SELECT a FROM t WHERE d > NOW() - INTERVAL 1 DAY", None, True),
    ("is-sql", "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20))", None, True),
    ("is-sql", "EXPLAIN SELECT a FROM t", None, True),
    ("is-sql", "SELECT a FROM t -- trailing comment", None, True),
    # dialects
    ("is-sql", "SELECT TOP 5 * FROM t", None, False),
    ("is-sql", "SELECT TOP 5 * FROM t", {"databaseType": "TransactSQL"}, True),
    ("is-sql", "SELECT [col] FROM [tab]", None, False),
    ("is-sql", "SELECT * FROM t WHERE a = $1", {"databaseType": "PostgreSQL"}, True),
    ("is-sql", "SELECT * FROM generate_series(1, 3)", {"databaseType": "PostgreSQL"}, True),
    ("is-sql", "SELECT * FROM t WHERE name ILIKE 'a%'", {"databaseType": "PostgreSQL"}, True),
    ("is-sql", "SELECT id FROM db.sch.t", None, False),
    ("is-sql", "SELECT id FROM cat.sch.t", {"databaseType": "Trino"}, True),
    ("is-sql", "SELECT id FROM proj.ds.t", {"databaseType": "BigQuery", "allowedTables": ["select::proj.ds::t"]}, True),
    ("is-sql", "SELECT id, name FROM users", {"databaseType": "Sqlite"}, True),
    ("is-sql", "SELECT id FROM users", {"databaseType": "postgresql"}, True),
    ("is-sql", "SELECT id FROM users", {"databaseType": "Snowflake"}, True),
    ("is-sql", "SELECT id FROM users", {"databaseType": "Redshift"}, True),
    ("is-sql", "SELECT id FROM users", {"databaseType": "MariaDB"}, True),
    ("is-sql", "SELECT id FROM users", {"databaseType": "Hive"}, True),
    ("is-sql", "SELECT id FROM users", {"databaseType": "Athena"}, True),
    ("is-sql", "SELECT id FROM users", {"databaseType": "Db2"}, True),
    # contains-sql
    ("contains-sql", "Use:\n```sql\nSELECT name FROM users\n```\n", None, True),
    ("contains-sql", "Use:\n```python\nprint(1)\n```\n", None, False),
    ("contains-sql", "SELECT 1", None, True),
    ("contains-sql", "I cannot write that.", None, False),
    ("contains-sql", "```sql\nSELEC a\n```\n```sql\nSELECT 1\n```", None, True),
    ("contains-sql", "```sql\nSELECT * FROM secrets\n```", T("select::null::users"), False),
    ("contains-sql", "Try SELECT a FROM b please", None, False),
    ("contains-sql", "~~~sql\nSELECT a FROM b\n~~~", {"databaseType": "PostgreSQL"}, True),
]


@pytest.mark.parametrize(("type_", "output", "value", "expected"), PROMPTFOO)
def test_same_verdict_as_promptfoo(type_: str, output: str, value: object, expected: bool) -> None:
    r = run(type_, output, value)
    assert r.error is None, r.error
    assert r.pass_ is expected, r.reason
    n = run("not-" + type_, output, value)
    assert n.pass_ is (not expected) and n.score == (0.0 if expected else 1.0)


# Where evalrun and promptfoo 0.121.20 differ (docs/assertions.md): sqlglot's dialects vs node-sql-parser's.
@pytest.mark.parametrize(("output", "database", "evalrun", "promptfoo"), [
    ("SELECT a FROM t # comment", "Sqlite", False, True),          # SQLite has no `#` comments
    ("hello world", "TransactSQL", False, True),                   # node-sql-parser's T-SQL grammar takes prose
    ("SELECT `a` FROM t", "PostgreSQL", False, True),              # backticks are not PostgreSQL
    ("SELECT id FROM a UNION SELECT id FROM b", "BigQuery", False, True),  # BigQuery wants UNION ALL/DISTINCT
    ("SELECT * FROM a NATURAL JOIN b", "MySQL", True, False),      # valid MySQL node-sql-parser lacks
    ("SELECT * FROM t WHERE name ILIKE 'a%'", "MySQL", True, False),  # sqlglot reads ILIKE in every dialect
])
def test_known_differences(output: str, database: str, evalrun: bool, promptfoo: bool) -> None:
    assert evalrun is not promptfoo
    ok, reason = judge_sql(output, parse_rules({"databaseType": database}))
    assert ok is evalrun, reason


def test_authorities_as_node_sql_parser_lists_them() -> None:
    trees = statements("SELECT u.name, o.* FROM shop.users u, orders o WHERE o.uid IN "
                       "(SELECT id FROM vip) ORDER BY 1", "mysql")
    assert tables(trees) == ["select::shop::users", "select::null::orders", "select::null::vip"]
    assert columns(trees) == ["select::users::name", "select::orders::(.*)", "select::orders::uid", "select::null::id"]
    trees = statements("UPDATE t SET a = 1 WHERE b = 2; DELETE FROM s; INSERT INTO r VALUES (1)", "mysql")
    assert tables(trees) == ["update::null::t", "delete::null::s", "insert::null::r"]
    assert columns(trees) == ["update::null::a", "select::null::b", "delete::s::(.*)", "insert::r::(.*)"]


def test_reasons_name_what_was_found() -> None:
    r = run("is-sql", "SELECT * FROM a, b", T("select::null::a"))
    assert r.reason == ("SQL references unauthorized table(s). Found: [select::null::a, select::null::b]. "
                        "Allowed: [select::null::a].")
    r = run("is-sql", "SELECT id FROM", {"databaseType": "PostgreSQL"})
    assert r.reason.startswith("SQL statement does not conform to the provided PostgreSQL database syntax: ")
    assert run("contains-sql", "```sql\nSELEC 1\n```").reason.startswith("SQL statement does not conform")


@pytest.mark.parametrize(("type_", "value", "needle"), [
    ("is-sql", "MySQL", "must be a mapping"),
    ("is-sql", {"allowedTables": "orders"}, "list of strings"),
    ("is-sql", {"allowedTables": []}, "is empty"),
    ("is-sql", {"allowedTables": ["orders"]}, "'orders' matches nothing"),        # plain names never match
    ("is-sql", {"allowedColumns": ["id"]}, "'select::null::id'"),
    ("is-sql", {"allowedTables": ["select::null::(orders"]}, "not a valid regular expression"),
    ("is-sql", {"databaseType": "Oracle"}, "one of: MySQL, MariaDB, PostgreSQL"),
    ("contains-sql", {"databse": "x"}, "did you mean `databaseType`"),
])
def test_bad_arguments(type_: str, value: object, needle: str) -> None:
    e = bad(type_, value)
    assert needle in str(e) and e.key == "tests[0].assert[0].value"


def test_templated_value_is_checked_per_case() -> None:
    r = run("is-sql", "SELECT 1", "{{ rules }}")   # rendered to a non-mapping: an ERROR, never a pass
    assert r.error is not None and not r.pass_


@pytest.mark.parametrize(("dialect", "sql", "ok"), [
    ("mysql", 'SELECT * FROM "a"', False),  # a string in MySQL: node-sql-parser (promptfoo) fails it
    ("mysql", "SELECT * FROM `a` JOIN b ON a.x = b.x", True),
    ("mysql", 'SELECT "a" FROM t', True),  # a string value is fine
    ("postgres", 'SELECT * FROM "a"', True),
    ("postgres", "SELECT * FROM t LIMIT 2, 5", False),  # MySQL's LIMIT form
    ("postgres", "SELECT * FROM t LIMIT 5 OFFSET 2", True),
    ("mysql", "SELECT * FROM t LIMIT 2, 5", True),
    ("postgres", "SELECT f(a, b) FROM t LIMIT 5", True),
])
def test_each_dialect_is_strict(dialect: str, sql: str, ok: bool) -> None:
    if ok:
        statements(sql, dialect)
    else:
        with pytest.raises(ValueError):
            statements(sql, dialect)
