"""is-sql and contains-sql: sqlglot parses in the `databaseType` dialect and refuses what promptfoo's node-sql-parser
refuses; `allowedTables` / `allowedColumns` match node-sql-parser's authority strings (`select::null::orders`)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, ParseError, TokenError, UnsupportedError
from sqlglot.tokens import Token, TokenType

from evalrun.assertions.base import Score, TextAssertion, binary
from evalrun.assertions.registry import register
from evalrun.assertions.sql_dialects import DIALECTS, dialect_problem

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
    """The text is not valid SQL in the dialect (the message says where or why)."""


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
    return [list(g) for semi, g in groupby(tokens, lambda t: t.token_type == TokenType.SEMICOLON) if not semi]


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
    problem = dialect_problem(tokens, dialect)
    if problem:
        return problem
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


_DATABASES = {name.lower(): name for name in DIALECTS}
_KEYS = ("databaseType", "allowedTables", "allowedColumns")
_PLAIN_NAME = re.compile(r"[\w$ ]+")
_EXAMPLE = {"allowedTables": ("select::null::orders", "(select|insert|update|delete)::.*::orders"),
            "allowedColumns": ("select::null::id", "select::orders::id")}


@dataclass(frozen=True)
class Whitelist:
    """One allowedTables/allowedColumns list: the entries as written and compiled as node-sql-parser does."""

    entries: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]

    def allows(self, authorities: list[str]) -> bool:
        """Every authority matches an entry (node-sql-parser's whiteListCheck)."""
        return all(any(p.search(a) for p in self.patterns) for a in authorities)


@dataclass(frozen=True)
class SqlRules:
    """A parsed `value`: the database (promptfoo's spelling), its sqlglot dialect, the whitelists."""

    database: str = "MySQL"
    dialect: str = "mysql"
    tables: Whitelist | None = None
    columns: Whitelist | None = None


def _whitelist(key: str, entries: Any) -> Whitelist | None:
    if entries is None:
        return None
    if not (isinstance(entries, list) and all(isinstance(e, str) for e in entries)):
        raise ValueError(f"{key} must be a list of strings, got {entries!r}")
    if not entries:
        raise ValueError(f"{key} is empty: promptfoo then checks nothing (every {key[7:-1].lower()} passes); "
                         f"omit {key} or list what the SQL may use")
    items = list(entries)
    for e in entries:
        if _PLAIN_NAME.fullmatch(e):
            first, second = _EXAMPLE[key]
            raise ValueError(f"{key} entry {e!r} matches nothing: each entry is matched against "
                             f"'operation::{'schema::table' if key == 'allowedTables' else 'table::column'}' "
                             f"(as in promptfoo), e.g. {first!r} or {second!r}")
        parts = e.split("::")  # promptfoo: an allowed `op::table::col` also allows an unqualified `op::null::col`
        if key == "allowedColumns" and len(parts) == 3 and parts[1] != "null" \
                and f"{parts[0]}::null::{parts[2]}" not in items:
            items.append(f"{parts[0]}::null::{parts[2]}")
    patterns = []
    for e in items:
        try:
            patterns.append(re.compile(f"^{e}$", re.IGNORECASE))
        except re.error as err:
            raise ValueError(f"{key} entry {e!r} is not a valid regular expression: {err}") from None
    return Whitelist(tuple(entries), tuple(patterns))


def parse_rules(value: Any) -> SqlRules:
    """The `value` of is-sql / contains-sql (None, or a mapping of _KEYS) -> SqlRules; ValueError when invalid."""
    if value is None:
        return SqlRules()
    if not isinstance(value, dict):
        raise ValueError(f"the value must be a mapping, got {value!r}")
    unknown = sorted(set(value) - set(_KEYS))
    if unknown:
        from evalrun.errors import did_you_mean
        hint = did_you_mean(unknown[0], _KEYS)
        raise ValueError(f"unknown keys {unknown}; allowed: {', '.join(_KEYS)}" + (f" ({hint})" if hint else ""))
    database = value.get("databaseType") or "MySQL"  # promptfoo: `value.databaseType || 'MySQL'`
    if not isinstance(database, str) or database.lower() not in _DATABASES:
        raise ValueError(f"databaseType {database!r} is not a database node-sql-parser (promptfoo) knows; "
                         f"one of: {', '.join(DIALECTS)}")
    return SqlRules(database, DIALECTS[_DATABASES[database.lower()]],
                    *(_whitelist(key, value.get(key)) for key in ("allowedTables", "allowedColumns")))


_WRITES: tuple[tuple[type[exp.Expr], str], ...] = (
    (exp.Insert, "insert"), (exp.Update, "update"), (exp.Delete, "delete"), (exp.Drop, "drop"),
    (exp.Alter, "alter"), (exp.TruncateTable, "truncate"), (exp.Create, "create"))


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _kind(tree: exp.Expr) -> str:
    return str(tree.args.get("kind") or "").upper()


def _targets(tree: exp.Expr) -> list[exp.Table]:
    """The tables a statement writes (every other table in it is read: `select`)."""
    if isinstance(tree, exp.Delete) and tree.args.get("tables"):  # DELETE t1 FROM t1 JOIN t2
        return list(tree.args["tables"])
    if isinstance(tree, exp.TruncateTable):
        return [t for t in tree.expressions if isinstance(t, exp.Table)]
    if isinstance(tree, (exp.Create, exp.Drop)) and _kind(tree) != "TABLE":
        return []
    if isinstance(tree, exp.Drop):
        return [t for t in [tree.this, *(tree.args.get("tables") or [])] if isinstance(t, exp.Table)]
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Alter, exp.Create)):
        node = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        return [node] if isinstance(node, exp.Table) else []
    return []


def _named(table: exp.Table) -> bool:
    """A table by name: not a table function (`generate_series(1, 3)`), not MySQL's `DUAL`."""
    return isinstance(table.this, exp.Identifier) and not (table.name.upper() == "DUAL" and not table.db)


def _schema(table: exp.Table) -> str:
    return ".".join(p for p in (table.catalog, table.db) if p) or "null"


def _listed_tables(tree: exp.Expr) -> list[str]:
    if isinstance(tree, exp.Show):
        return ["show::null::null"]
    if isinstance(tree, exp.Use):
        return [f"use::{tree.this.name if tree.this is not None else 'null'}::null"]
    if isinstance(tree, (exp.Grant, exp.Revoke, exp.Set)) or (isinstance(tree, exp.Describe)
                                                               and isinstance(tree.this, exp.Table)):
        return []  # GRANT ... ON t, DESCRIBE t: nothing listed (EXPLAIN SELECT ... lists the query's tables)
    if (isinstance(tree, exp.Drop) and _kind(tree) != "TABLE") or (isinstance(tree, exp.Create)
                                                                   and _kind(tree) not in ("TABLE", "VIEW")):
        return []  # CREATE/DROP INDEX, DATABASE, ..., DROP VIEW: nothing listed
    targets = _targets(tree)
    op = next((name for cls, name in _WRITES if isinstance(tree, cls)), "select")
    skip = {id(t) for t in targets}
    if isinstance(tree, exp.Create) and not targets and tree.this is not None:  # CREATE VIEW v: v is not listed
        skip |= {id(t) for t in tree.this.find_all(exp.Table)}
    out = [f"{op}::{_schema(t)}::{t.name}" for t in targets if _named(t)]
    written = {(t.name, _schema(t)) for t in targets}
    out += [f"select::{_schema(t)}::{t.name}" for t in tree.find_all(exp.Table)
            if id(t) not in skip and _named(t) and (t.name, _schema(t)) not in written]
    return out


def tables(trees: list[exp.Expr]) -> list[str]:
    """`operation::schema::table` for every table the statements read or write (node-sql-parser's tableList)."""
    return _unique(a for tree in trees for a in _listed_tables(tree))


def _listed_columns(tree: exp.Expr) -> list[str]:
    if isinstance(tree, (exp.Set, exp.Grant, exp.Revoke)):
        return []
    aliases = {t.alias: t.name for t in tree.find_all(exp.Table) if t.alias and _named(t)}
    assigned = {id(e.this) for e in tree.expressions if isinstance(e, exp.EQ)} if isinstance(tree, exp.Update) \
        else set()
    out: list[str] = []
    for node in tree.walk(prune=lambda n: isinstance(n, exp.OnConflict)):  # ON DUPLICATE KEY UPDATE: not listed
        item = node.parent if isinstance(node.parent, exp.Alias) else node  # a select-list item, maybe aliased
        if isinstance(node, exp.Star) and isinstance(node.parent, exp.Select):
            out.append("select::null::(.*)")
        elif isinstance(node, exp.Literal) and node.is_string and isinstance(item.parent, exp.Select) \
                and item.arg_key == "expressions":
            out.append(f"select::null::{node.this}")
        elif isinstance(node, exp.Column):
            name = "(.*)" if isinstance(node.this, exp.Star) else node.name
            table = aliases.get(node.table, node.table)
            qualifier = "::".join(p for p in (node.text("db"), table) if p) or "null"
            out.append(f"{'update' if id(node) in assigned else 'select'}::{qualifier}::{name}")
        elif isinstance(node, exp.ColumnDef):
            out += [f"select::null::{node.name}", f"create::null::{node.name}"]
    targets = _targets(tree)
    if isinstance(tree, exp.Insert) and targets:
        names = [e.name for e in tree.this.expressions] if isinstance(tree.this, exp.Schema) else ["(.*)"]
        out += [f"insert::{targets[0].name}::{n}" for n in names]
    elif isinstance(tree, exp.Delete):
        out += [f"delete::{t.name}::(.*)" for t in targets]
    return out


def columns(trees: list[exp.Expr]) -> list[str]:
    """`operation::table::column` for every column the statements name (node-sql-parser's columnList)."""
    return _unique(a for tree in trees for a in _listed_columns(tree))


def judge_sql(sql: str, rules: SqlRules) -> tuple[bool, str]:
    """promptfoo's is-sql verdict on `sql` and its reason."""
    text = sql.strip()
    syntax = f"SQL statement does not conform to the provided {rules.database} database syntax"
    if not text:
        return False, f"{syntax}: the output is empty."
    if text.count("`") % 2:
        return False, f"{syntax}: unbalanced backtick."
    if rules.database == "MySQL" and re.search(r"\bgenerate_series\s*\(", text, re.IGNORECASE):
        return False, f"{syntax}: generate_series is not MySQL."
    try:
        if likely_missing_comma(text, rules.dialect, mysql_family=rules.database in ("MySQL", "MariaDB")):
            return False, f"{syntax}: a comma seems to be missing between two column names."
        trees = statements(text, rules.dialect)
    except SqlSyntaxError as e:
        return False, f"{syntax}: {e}."
    reasons = []
    for what, whitelist, found in (("table", rules.tables, tables), ("column", rules.columns, columns)):
        if whitelist is None:
            continue
        listed = found(trees)
        if not whitelist.allows(listed):
            reasons.append(f"SQL references unauthorized {what}(s). Found: [{', '.join(listed)}]. "
                           f"Allowed: [{', '.join(whitelist.entries)}].")
    if reasons:
        return False, " ".join(reasons)
    return True, f"Output is valid {rules.database} SQL"


#: A ``` or ~~~ fenced block (CommonMark: closed by the same character, at least as long; else open to the end)
_FENCED = re.compile(r"^[ \t]{0,3}((`|~)\2{2,})[ \t]*([^\n]*)(?:\n(.*?)^[ \t]{0,3}\1\2*[ \t]*$|.*\Z)", re.M | re.S)


class _SqlBase(TextAssertion):
    value_hint = ("write `value: {databaseType: PostgreSQL, allowedTables: ['select::null::orders'], "
                  "allowedColumns: ['select::orders::id']}` or omit value")

    def parse(self, value: Any) -> SqlRules:
        return parse_rules(value)


@register("is-sql")
class IsSql(_SqlBase):
    """The whole output is valid SQL in `databaseType`, touching only the allowed tables and columns.

    YAML keys: `value` (optional) with `databaseType` (default MySQL; node-sql-parser's names: PostgreSQL,
    TransactSQL, Sqlite, BigQuery, ...), `allowedTables` (entries such as `select::null::orders`, regular
    expressions matched against `operation::schema::table`), `allowedColumns` (`select::orders::id`, matched
    against `operation::table::column`).
    """

    def judge_text(self, output: str, value: Any) -> Score:
        ok, reason = judge_sql(output, self.parsed(value))
        return binary(ok, reason)


@register("contains-sql")
class ContainsSql(_SqlBase):
    """The output contains valid SQL: a ```sql (or untagged) fenced block, else the whole output.

    YAML keys: `value` (optional): `{databaseType, allowedTables, allowedColumns}` as for is-sql.
    """

    def judge_text(self, output: str, value: Any) -> Score:
        rules = self.parsed(value)
        reason = "Output does not contain valid SQL"
        blocks = [m.group(4).strip() for m in _FENCED.finditer(re.sub(r"\r\n?", "\n", output))
                  if m.group(4) is not None and m.group(3).strip().lower() in ("", "sql")]  # extractSqlCodeBlocks
        for cand in blocks or [output]:
            if not cand.strip():
                continue
            ok, why = judge_sql(cand, rules)
            if ok:
                return binary(True, "Output contains valid SQL")
            reason = why
        return binary(False, reason)
