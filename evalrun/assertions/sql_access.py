"""The tables and columns parsed SQL statements touch, as node-sql-parser's "authority" strings.

    tables(trees)    `operation::schema::table`   select::null::orders, insert::shop::orders, drop::null::t
    columns(trees)   `operation::table::column`   select::null::id, select::users::id, select::null::(.*)

promptfoo checks `allowedTables` / `allowedColumns` with node-sql-parser's whiteListCheck, which matches every
entry against these strings; this module builds the same strings from sqlglot's tree. Tables: every table read
or written (joins, comma joins, subqueries, UNION branches, CTE references: node-sql-parser lists a CTE's name as
a table), the schema part `null` when unqualified, `catalog.schema` for three-part names, names as written.
Columns: a qualifier is resolved through the table aliases (case-sensitively, as node-sql-parser does), `null`
when unqualified; `*` is `(.*)`; a string literal in a select list counts as a column (node-sql-parser's reading).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

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
    if isinstance(tree, (exp.Create, exp.Drop)) and _kind(tree) not in ("TABLE", "VIEW"):
        return []  # CREATE/DROP INDEX, DATABASE, ...: nothing listed
    if isinstance(tree, exp.Drop) and _kind(tree) == "VIEW":
        return []
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
