"""SQL assertions: is-sql, contains-sql, with promptfoo's `databaseType`, `allowedTables` and `allowedColumns`.

promptfoo parses with node-sql-parser; evalrun with sqlglot in the matching dialect (sql_statements.py), then
applies promptfoo's own checks on top: an empty output, an odd number of backticks, a likely missing comma
(`SELECT id name FROM t`) and, for `databaseType: MySQL`, `generate_series(`, all fail. `allowedTables` and
`allowedColumns` entries are node-sql-parser whitelist entries: regular expressions matched, whole and ignoring
case, against `operation::schema::table` and `operation::table::column` (see sql_statements.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from evalrun.assertions.base import Score, TextAssertion, binary
from evalrun.assertions.registry import register
from evalrun.assertions.sql_access import columns, tables
from evalrun.assertions.sql_statements import DIALECTS, SqlSyntaxError, likely_missing_comma, statements

#: promptfoo's spelling of node-sql-parser's databases, for messages (the lookup ignores case).
DATABASES = ("MySQL", "MariaDB", "PostgreSQL", "Sqlite", "TransactSQL", "BigQuery", "Snowflake", "Redshift",
             "Hive", "Athena", "Trino", "Db2", "FlinkSQL", "Noql")
_KEYS = ("databaseType", "allowedTables", "allowedColumns")
_PLAIN_NAME = re.compile(r"[\w$ ]+")
_EXAMPLE = {"allowedTables": ("select::null::orders", "(select|insert|update|delete)::.*::orders"),
            "allowedColumns": ("select::null::id", "select::orders::id")}


@dataclass(frozen=True)
class Whitelist:
    """One allowedTables/allowedColumns list: the entries as written and compiled as node-sql-parser does."""

    entries: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]

    def denied(self, authorities: list[str]) -> str | None:
        """The first authority no entry matches (node-sql-parser's whiteListCheck), or None."""
        for authority in authorities:
            if not any(p.search(authority) for p in self.patterns):
                return authority
        return None


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
    if key == "allowedColumns":  # promptfoo: `op::table::col` also allows an unqualified `op::null::col`
        for e in entries:
            parts = e.split("::")
            if len(parts) == 3 and parts[1] != "null" and f"{parts[0]}::null::{parts[2]}" not in items:
                items.append(f"{parts[0]}::null::{parts[2]}")
    patterns = []
    for e in entries:
        if _PLAIN_NAME.fullmatch(e):
            first, second = _EXAMPLE[key]
            raise ValueError(f"{key} entry {e!r} matches nothing: each entry is matched against "
                             f"'operation::{'schema::table' if key == 'allowedTables' else 'table::column'}' "
                             f"(as in promptfoo), e.g. {first!r} or {second!r}")
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
        from evalrun.suggest import did_you_mean

        hint = did_you_mean(unknown[0], _KEYS)
        raise ValueError(f"unknown keys {unknown}; allowed: {', '.join(_KEYS)}" + (f" ({hint})" if hint else ""))
    database = value.get("databaseType") or "MySQL"  # promptfoo: `value.databaseType || 'MySQL'`
    if not isinstance(database, str) or database.lower() not in DIALECTS:
        raise ValueError(f"databaseType {database!r} is not a database node-sql-parser (promptfoo) knows; "
                         f"one of: {', '.join(DATABASES)}")
    return SqlRules(database, DIALECTS[database.lower()], _whitelist("allowedTables", value.get("allowedTables")),
                    _whitelist("allowedColumns", value.get("allowedColumns")))


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
        if whitelist.denied(listed) is not None:
            reasons.append(f"SQL references unauthorized {what}(s). Found: [{', '.join(listed)}]. "
                           f"Allowed: [{', '.join(whitelist.entries)}].")
    if reasons:
        return False, " ".join(reasons)
    return True, f"Output is valid {rules.database} SQL"


_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*([^\r\n]*)$")


def sql_blocks(text: str) -> list[str]:
    """Bodies of ``` fenced blocks tagged `sql` or untagged (promptfoo's extractSqlCodeBlocks)."""
    blocks: list[str] = []
    active: tuple[str, int, bool, list[str]] | None = None
    for line in re.split(r"\r\n?|\n", text):
        if active is None:
            m = _FENCE.match(line)
            if m:
                lang = m.group(2).strip().lower()
                active = (m.group(1)[0], len(m.group(1)), lang in ("", "sql"), [])
            continue
        m = re.match(r"^[ \t]{0,3}(`{3,}|~{3,})[ \t]*$", line)
        if m and m.group(1)[0] == active[0] and len(m.group(1)) >= active[1]:
            if active[2]:
                blocks.append("\n".join(active[3]).strip())
            active = None
        else:
            active[3].append(line)
    return blocks


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

    summary = "output is valid SQL (databaseType, allowedTables, allowedColumns)"

    def judge_text(self, output: str, value: Any) -> Score:
        ok, reason = judge_sql(output, self.parsed(value))
        return binary(ok, reason)


@register("contains-sql")
class ContainsSql(_SqlBase):
    """The output contains valid SQL: a ```sql (or untagged) fenced block, else the whole output.

    YAML keys: `value` (optional): `{databaseType, allowedTables, allowedColumns}` as for is-sql.
    """

    summary = "output contains valid SQL (fenced block or whole output)"

    def judge_text(self, output: str, value: Any) -> Score:
        rules = self.parsed(value)
        reason = "Output does not contain valid SQL"
        for cand in sql_blocks(output) or [output]:
            if not cand.strip():
                continue
            ok, why = judge_sql(cand, rules)
            if ok:
                return binary(True, "Output contains valid SQL")
            reason = why
        return binary(False, reason)
