"""What is SQL in one database and not in another, beyond what sqlglot's dialects refuse: is-sql's `databaseType`
names (promptfoo's, node-sql-parser's) and the token-level checks that make a dialect strict (issue 36)."""

from __future__ import annotations

from sqlglot.tokens import Token, TokenType

#: node-sql-parser's databases, as promptfoo spells `databaseType` (matched ignoring case) -> sqlglot dialect. Db2,
#: FlinkSQL and Noql have no sqlglot dialect: they are read with sqlglot's generic SQL.
DIALECTS = {"MySQL": "mysql", "MariaDB": "mysql", "PostgreSQL": "postgres", "Sqlite": "sqlite", "TransactSQL": "tsql",
            "BigQuery": "bigquery", "Snowflake": "snowflake", "Redshift": "redshift", "Hive": "hive",
            "Athena": "athena", "Trino": "trino", "Db2": "", "FlinkSQL": "", "Noql": ""}
#: Tokens after which a name is a table's (`FROM "a"`: MySQL reads a double-quoted "a" as a string, no table).
_TABLE_BEFORE = {TokenType.FROM, TokenType.JOIN, TokenType.INTO, TokenType.UPDATE, TokenType.TABLE}
#: Dialects where `LIMIT offset, count` is SQL (MySQL's form; PostgreSQL and the others write LIMIT n OFFSET m).
_COMMA_LIMIT = {"mysql", "sqlite", "hive", ""}


def dialect_problem(tokens: list[Token], dialect: str) -> str | None:
    """What sqlglot reads leniently across dialects but the dialect (and node-sql-parser in it) refuses."""
    depth = 0
    in_limit = False
    for prev, tok in zip([None, *tokens], tokens, strict=False):
        kind = tok.token_type
        if dialect == "mysql" and kind == TokenType.STRING and prev is not None and prev.token_type in _TABLE_BEFORE:
            return (f"{tok.text!r} after {prev.text.upper()} is a string in MySQL, not a table name (quote names "
                    "with `backticks`)")
        depth += (kind == TokenType.L_PAREN) - (kind == TokenType.R_PAREN)
        if kind == TokenType.LIMIT and depth == 0:
            in_limit = True
        elif in_limit and depth == 0 and kind == TokenType.COMMA and dialect not in _COMMA_LIMIT:
            return f"LIMIT offset, count (at line {tok.line}) is MySQL syntax: write LIMIT count OFFSET offset"
        elif in_limit and depth == 0 and kind not in (TokenType.NUMBER, TokenType.COMMA, TokenType.PLACEHOLDER,
                                                        TokenType.PARAMETER, TokenType.VAR):
            in_limit = False
    return None
