"""SQL assertions: is-sql, contains-sql. A standard-library check, not a full dialect parser.

How a statement is judged (promptfoo uses node-sql-parser; evalrun has no dependency for this):
1. it must be non-empty, with balanced quotes, backticks and parentheses, no doubled commas or a trailing comma;
2. statements only some dialects know (`SHOW`, `DESCRIBE`, `USE`, `SET`, ...) are accepted on their keyword;
3. everything else is compiled by SQLite (`EXPLAIN`, in memory, nothing executed): a syntax error fails it,
   while unknown tables, columns or functions do not (the schema is unknown).
Limits: dialect-only syntax SQLite rejects (e.g. PostgreSQL `::` casts, `ILIKE`, `TOP n`) fails.
`allowedTables` is checked on the table names after FROM/JOIN/INTO/UPDATE/TABLE.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from evalrun.assertions.base import Assertion, AssertionContext, Score, binary
from evalrun.assertions.registry import register

_KEYWORD_ONLY = ("SHOW", "DESCRIBE", "DESC", "USE", "SET", "GRANT", "REVOKE", "LOCK", "UNLOCK", "CALL",
                 "TRUNCATE", "RENAME", "OPTIMIZE", "FLUSH", "KILL")
_OK_ERRORS = ("no such table", "no such column", "no such function", "not authorized", "no such collation",
              "no such module", "unknown database", "already exists", "no tables specified", "no such view",
              "no such index", "no such trigger")
#: MySQL syntax SQLite lacks, rewritten to an equivalent SQLite form before compiling (syntax check only).
_REWRITES = (
    (re.compile(r"^\s*EXPLAIN\s+(?:QUERY\s+PLAN\s+)?", re.I), ""),
    (re.compile(r"\s+(?:FOR\s+(?:UPDATE|SHARE)(?:\s+(?:NOWAIT|SKIP\s+LOCKED))?|LOCK\s+IN\s+SHARE\s+MODE)\s*$",
                re.I), ""),
    (re.compile(r"::\s*[A-Za-z_]\w*(?:\s*\(\s*\d+(?:\s*,\s*\d+)?\s*\))?"), ""),
    (re.compile(r"(?:=|<>|!=|<=|>=|<|>)\s*(?:ANY|SOME|ALL)\s*\(", re.I), " IN ("),
    (re.compile(r"^\s*(?:INSERT|REPLACE)\s+(?:IGNORE\s+)?(?:INTO\s+)?([`\"\w.]+)\s+SET\s+", re.I), r"UPDATE \1 SET "),
)


def to_sqlite(stmt: str) -> str:
    """Rewrite the MySQL-only constructs node-sql-parser accepts into SQLite syntax."""
    for rx, repl in _REWRITES:
        stmt = rx.sub(repl, stmt)
    return stmt
_TABLE_REF = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?"
                        r"([`\"\[]?[\w.$]+[`\"\]]?)", re.I)


def _authorizer(action: int, *_: Any) -> int:
    if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH, sqlite3.SQLITE_PRAGMA):
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _strip_literals(sql: str) -> str:
    return re.sub(r"'(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`|--[^\n]*|/\*.*?\*/", "''", sql, flags=re.S)


def split_statements(sql: str) -> list[str]:
    """Split on `;` outside quotes/comments (sqlite3.complete_statement decides statement ends)."""
    out, buf = [], ""
    for part in re.split(r"(;)", sql):
        buf += part
        if part == ";" and sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                out.append(buf.strip())
            buf = ""
    if buf.strip(" \t\r\n;"):
        out.append(buf.strip())
    return out


def sql_problem(sql: str) -> str | None:
    """Why `sql` is not valid SQL, or None when it is."""
    text = sql.strip()
    if not text:
        return "Output is empty"
    if text.count("`") % 2:
        return "Unbalanced backtick"
    if not sqlite3.complete_statement(text + "\n;"):
        return "Unterminated string literal or comment"
    bare = _strip_literals(text)
    if bare.count("(") != bare.count(")"):
        return "Unbalanced parentheses"
    if re.search(r",\s*,", bare) or re.search(r",\s*(\)|\bFROM\b|;|$)", bare, re.I):
        return "Misplaced comma"
    if re.search(r"\bgenerate_series\s*\(", bare, re.I):  # promptfoo: not MySQL, its default dialect
        return "generate_series is not MySQL"
    conn = sqlite3.connect(":memory:")
    try:
        conn.set_authorizer(_authorizer)
        for stmt in split_statements(text):
            first = re.match(r"\s*(\w+)(\s+[@`\"\w])?", stmt)
            if first and first.group(1).upper() in _KEYWORD_ONLY:
                if first.group(2) and "```" not in stmt:
                    continue
                return f"Incomplete {first.group(1).upper()} statement"
            try:
                conn.execute("EXPLAIN " + to_sqlite(stmt.rstrip(";")))
            except sqlite3.Warning as e:  # pragma: no cover - several statements
                return str(e)
            except sqlite3.Error as e:
                msg = str(e)
                if not any(ok in msg for ok in _OK_ERRORS):
                    return f"SQL syntax error: {msg}"
    finally:
        conn.close()
    return None


def tables_in(sql: str) -> list[str]:
    return sorted({m.group(1).strip("`\"[]").split(".")[-1] for m in _TABLE_REF.finditer(_strip_literals(sql))})


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


class _SqlBase(Assertion):
    value_hint = "write `value: {databaseType: MySQL, allowedTables: [a, b]}` or omit value"

    def parse(self, value: Any) -> list[str] | None:
        if value is None:
            return None
        if not isinstance(value, dict):
            raise ValueError(f"{self.spec.type} value must be a mapping, got {value!r}")
        unknown = set(value) - {"databaseType", "allowedTables", "allowedColumns"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}; allowed: databaseType, allowedTables")
        if "allowedColumns" in value:
            raise ValueError("allowedColumns is not supported by evalrun's SQL check")
        tables = value.get("allowedTables")
        if tables is not None and not (isinstance(tables, list) and all(isinstance(t, str) for t in tables)):
            raise ValueError("allowedTables must be a list of strings")
        return [t.split("::")[-1].lower() for t in tables] if tables is not None else None

    def judge(self, sql: str, allowed: list[str] | None) -> tuple[bool, str]:
        problem = sql_problem(sql)
        if problem:
            return False, problem
        if allowed is not None:
            bad = [t for t in tables_in(sql) if t.lower() not in allowed]
            if bad:
                return False, f"SQL references tables outside allowedTables: {bad}"
        return True, "Output is valid SQL"


@register("is-sql")
class IsSql(_SqlBase):
    """The whole output is valid SQL (see the module notes for how it is checked).

    YAML keys: `value` (optional): `{databaseType, allowedTables}`; `databaseType` is accepted for
    compatibility (one checker serves every dialect); `allowedTables` lists the tables the SQL may name.
    """

    summary = "output is valid SQL (optional allowedTables)"

    async def evaluate(self, ctx: AssertionContext) -> Score:
        ok, reason = self.judge(ctx.output, self.value_of(ctx))
        return binary(ok, reason)


@register("contains-sql")
class ContainsSql(_SqlBase):
    """The output contains valid SQL: a ```sql (or untagged) fenced block, else the whole output.

    YAML keys: `value` (optional): `{databaseType, allowedTables}` as for is-sql.
    """

    summary = "output contains valid SQL (fenced block or whole output)"

    async def evaluate(self, ctx: AssertionContext) -> Score:
        allowed = self.value_of(ctx)
        reason = "Output does not contain valid SQL"
        for cand in sql_blocks(ctx.output) or [ctx.output]:
            if not cand.strip():
                continue
            ok, why = self.judge(cand, allowed)
            if ok:
                return binary(True, "Output contains valid SQL")
            reason = why
        return binary(False, reason)
