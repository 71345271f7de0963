"""SQL text -> statements, parsed by sqlglot in the dialect of `databaseType`, refusing what node-sql-parser
(promptfoo's parser) refuses (sqlglot reads `hello world` as an aliased column)."""

from __future__ import annotations

import logging
import re

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError, UnsupportedError
from sqlglot.tokens import Token, TokenType

#: node-sql-parser's databases, as promptfoo spells `databaseType` (matched ignoring case) -> sqlglot dialect. Db2,
#: FlinkSQL and Noql have no sqlglot dialect: they are read with sqlglot's generic SQL.
DIALECTS = {"MySQL": "mysql", "MariaDB": "mysql", "PostgreSQL": "postgres", "Sqlite": "sqlite", "TransactSQL": "tsql",
            "BigQuery": "bigquery", "Snowflake": "snowflake", "Redshift": "redshift", "Hive": "hive",
            "Athena": "athena", "Trino": "trino", "Db2": "", "FlinkSQL": "", "Noql": ""}
#: Statement kinds node-sql-parser parses (an expression sqlglot reads as a whole "statement" is not one).
_STATEMENTS = (exp.Query, exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter, exp.TruncateTable,
               exp.Use, exp.Show, exp.Describe, exp.Set, exp.Grant, exp.Revoke, exp.Merge, exp.Transaction,
               exp.Commit, exp.Rollback)
_QUERY_STARTS = {TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN, TokenType.VALUES, TokenType.TABLE}
#: A comma followed by these ends no list (sqlglot accepts `SELECT a, FROM t` and `VALUES (1,)`).
_NOT_AFTER_COMMA = {TokenType.COMMA, TokenType.FROM, TokenType.R_PAREN, TokenType.SEMICOLON}
#: A statement cannot end on these words (sqlglot accepts `JOIN u ON`, `FROM t AS`, `UPDATE t SET`).
_DANGLING = {"ON", "AS", "SET", "AND", "OR", "JOIN", "FROM", "WHERE", "BY", "INTO", "USING"}
#: Dialects without three-part `catalog.schema.table` names (sqlglot reads them in every dialect).
_TWO_PART_NAMES = {"mysql", "sqlite"}

logging.getLogger("sqlglot").setLevel(logging.ERROR)  # its "falling back to a Command" notice is our verdict


class SqlSyntaxError(ValueError):
    """The text is not valid SQL in the dialect; the message says where or why."""


def _tokenize(sql: str, dialect: str) -> list[Token]:
    try:
        return list(Dialect.get_or_raise(dialect).tokenize(sql))
    except TokenError as e:
        raise SqlSyntaxError(f"cannot tokenize: {_first_line(e)}") from None


def _first_line(e: Exception) -> str:
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def statements(sql: str, dialect: str) -> list[exp.Expr]:
    """The statements of `sql` (`;`-separated), or SqlSyntaxError."""
    tokens = _tokenize(sql, dialect)
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.COMMA and (i + 1 == len(tokens) or tokens[i + 1].token_type
                                                   in _NOT_AFTER_COMMA):
            raise SqlSyntaxError(f"misplaced comma at line {tok.line}, column {tok.col}")
    try:
        parser = Dialect.get_or_raise(dialect).parser(error_level=ErrorLevel.RAISE)
        trees = [t for t in parser.parse(tokens, sql) if t is not None]
    except ParseError as e:
        raise SqlSyntaxError(_first_line(e)) from None
    chunks = _split(tokens)
    if not trees or len(trees) != len(chunks):
        raise SqlSyntaxError("no statement" if not trees else "cannot split the statements")
    for tree, chunk in zip(trees, chunks, strict=True):
        problem = _problem(tree, chunk, dialect)
        if problem:
            raise SqlSyntaxError(problem)
    return trees


def _split(tokens: list[Token]) -> list[list[Token]]:
    """The tokens of each `;`-separated statement (as sqlglot splits them)."""
    chunks: list[list[Token]] = [[]]
    for tok in tokens:
        if tok.token_type == TokenType.SEMICOLON:
            chunks.append([])
        else:
            chunks[-1].append(tok)
    return [c for c in chunks if c]


def _problem(tree: exp.Expr, tokens: list[Token], dialect: str) -> str | None:
    """Why a statement sqlglot read is still not SQL (as node-sql-parser judges it), or None."""
    first, last = tokens[0], tokens[-1]
    words = [t.text.upper() for t in tokens]
    if isinstance(tree, exp.Command):  # sqlglot did not parse it; node-sql-parser parses CALL name
        return None if tree.name.upper() == "CALL" else f"unsupported or invalid {tree.name.upper()} statement"
    if not isinstance(tree, _STATEMENTS):
        return f"{first.text!r} starts no SQL statement"
    if isinstance(tree, exp.Query) and first.token_type not in _QUERY_STARTS:
        return f"a query cannot start with {first.text!r}"
    if last.token_type not in (TokenType.STRING, TokenType.IDENTIFIER) and words[-1] in _DANGLING and not isinstance(tree, exp.Set):
        return f"the statement ends on {last.text!r}"
    if any(not s.expressions for s in tree.find_all(exp.Select)):
        return "SELECT without a column list"
    if any(not any(g.args.values()) for g in tree.find_all(exp.Group)):
        return "GROUP BY without an expression"
    if any(not (i.expressions or i.args.get("query") or i.args.get("unnest") or i.args.get("field"))
           for i in tree.find_all(exp.In)):
        return "IN () without a value"
    if isinstance(tree, exp.Insert) and tree.args.get("expression") is None:
        return "INSERT without VALUES, SELECT or SET"
    if isinstance(tree, exp.Update) and not tree.expressions:
        return "UPDATE without SET assignments"
    if isinstance(tree, exp.Delete) and not isinstance(tree.this, exp.Table):  # sqlglot reads `DELETE t WHERE`
        return "DELETE without FROM"
    if isinstance(tree, exp.Describe) and isinstance(tree.this, exp.Table) and words[0] == "EXPLAIN":
        return "EXPLAIN takes a query (DESCRIBE takes a table)"
    if isinstance(tree, exp.Commit) and len(words) > 2:
        return "COMMIT takes no argument"
    if isinstance(tree, exp.Use) and (tree.this is None or tree.this.args.get("alias")
                                      or tree.this.find(exp.Placeholder)):
        return "USE takes a database name"
    try:  # what sqlglot knows the dialect lacks (`ARRAY[1, 2]` in MySQL)
        tree.sql(dialect=dialect, unsupported_level=ErrorLevel.RAISE)
    except UnsupportedError as e:
        return _first_line(e)
    if dialect in _TWO_PART_NAMES and any(t.catalog for t in tree.find_all(exp.Table)):
        return "a table name has at most two parts (schema.table) here"
    return None


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MODIFIERS = frozenset({"ALL", "DISTINCT"})
_MYSQL_MODIFIERS = _MODIFIERS | {"DISTINCTROW", "HIGH_PRIORITY", "STRAIGHT_JOIN", "SQL_BIG_RESULT",
                                 "SQL_BUFFER_RESULT", "SQL_CACHE", "SQL_CALC_FOUND_ROWS", "SQL_NO_CACHE",
                                 "SQL_SMALL_RESULT"}


def likely_missing_comma(sql: str, dialect: str, *, mysql_family: bool) -> bool:
    """promptfoo's heuristic: `SELECT [modifiers] word word FROM` (`SELECT id name FROM t`, which SQL reads as
    `id AS name`) is taken for a missing comma. Words are unquoted names: strings and comments do not count."""
    words = [t.text.upper() if _WORD.fullmatch(sql[t.start:t.end + 1]) else None for t in _tokenize(sql, dialect)]
    modifiers = _MYSQL_MODIFIERS if mysql_family else _MODIFIERS
    for i, word in enumerate(words):
        if word != "SELECT":
            continue
        j = i + 1
        while j < len(words) and words[j] in modifiers:
            j += 1
        window = words[j:j + 3]
        if len(window) == 3 and window[0] and window[1] and window[2] == "FROM":
            return True
    return False
