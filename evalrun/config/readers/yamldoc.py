"""YAML with a line for every mapping key and list item (LDict / LList), scalars as YAML 1.2's core schema reads
them (as promptfoo's js-yaml does); duplicate keys, alias bombs and deep nesting are errors at their line."""

from __future__ import annotations

import re
from typing import Any

import yaml

from evalrun.config.readers.located import MAX_ALIAS_VALUES, MAX_DEPTH, LDict, LList, check_size, located
from evalrun.errors import ConfigError

try:  # libyaml: much faster, and from 0.2.5 on it stops at 1,000 nesting levels (older ones crash there)
    from yaml import CSafeLoader as _BaseLoader
    from yaml._yaml import get_version

    if get_version() < (0, 2, 5):  # pragma: no cover
        raise ImportError("libyaml older than 0.2.5")
except ImportError:  # pragma: no cover - the pure-Python loader: its recursion ends in a RecursionError
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]

_TOO_DEEP = f"lists and mappings are nested more than {MAX_DEPTH} levels deep"
_STR = "tag:yaml.org,2002:str"


class _Loader(_BaseLoader):
    """YAML 1.2 core-schema scalars: `yes`/`no`/`on`/`off` stay strings, `012` is 12 and `1:30` a string (PyYAML
    follows YAML 1.1 there; promptfoo does not)."""

    yaml_implicit_resolvers: dict[Any, Any] = {}


for _tag_name, _pattern, _first in (
    ("bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    ("float", r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
              r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+0123456789."),
    ("null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
    ("merge", r"^(?:<<)$", "<"),
):
    _Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag_name}", re.compile(_pattern), list(_first))


def _core_scalar(tag: str, value: str) -> Any:
    """Construct a YAML 1.2 core scalar from its resolved tag."""
    if tag.endswith(":bool"):
        return value.lower() == "true"
    if tag.endswith(":null"):
        return None
    if tag.endswith(":int"):  # `012` is twelve (YAML 1.2), `0o12` ten
        return int(value, 0 if value.startswith(("0o", "0x")) else 10)
    return float(value.lower().replace(".inf", "inf").replace(".nan", "nan"))  # `-.inf`, `.NaN`


_MERGE = "tag:yaml.org,2002:merge"
_KNOWN = frozenset(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float"))


class _Converter:
    """A composed node tree -> LDict/LList/scalars. An alias shares the value already converted and counts what it
    adds once expanded (past MAX_ALIAS_VALUES: an alias bomb); an alias inside its own anchor is an error."""

    def __init__(self, loader: Any, file: str) -> None:
        self.loader = loader
        self.file = file
        self.memo: dict[int, Any] = {}
        self.sizes: dict[int, int] = {}  # id(node) -> number of values once expanded
        self.alias_values = 0
        self.depth = 0

    def scalar(self, node: yaml.Node) -> Any:
        if node.tag == _STR:
            return node.value
        if node.tag in _KNOWN and isinstance(node.value, str):
            try:
                return _core_scalar(node.tag, node.value)
            except ValueError:  # an explicit tag on a value that does not fit it
                raise ConfigError(f"{node.value!r} is not a valid {node.tag.rsplit(':', 1)[1]}", file=self.file,
                                  line=node.start_mark.line + 1) from None
        out = self.loader.construct_object(node, deep=True)
        if not isinstance(out, (str, int, float, bool, type(None))):
            return str(node.value)  # timestamps, binary: keep the text as written
        return out

    def size(self, node: yaml.Node) -> int:
        return 1 if isinstance(node, yaml.ScalarNode) else self.sizes[id(node)]

    def convert(self, node: yaml.Node, line: int = 0) -> Any:
        """`line`: where the reference to `node` is written (for alias errors)."""
        if isinstance(node, yaml.ScalarNode):
            return self.scalar(node)
        key = id(node)
        if key in self.memo:  # an alias: share the already converted value
            if key not in self.sizes:
                raise ConfigError("an alias (*name) is used inside the value its anchor (&name) names",
                                  file=self.file, line=line or node.start_mark.line + 1,
                                  hint="such a value would contain itself forever; copy the data instead")
            self.alias_values += self.sizes[key]
            if self.alias_values > MAX_ALIAS_VALUES:
                raise ConfigError(f"YAML aliases (*name) expand to more than {MAX_ALIAS_VALUES:,} values",
                                  file=self.file, line=line or node.start_mark.line + 1,
                                  hint="an alias copies its whole anchored value: nested aliases multiply "
                                       "(an 'alias bomb'); write the data out, or reuse less")
            return self.memo[key]
        own_line = node.start_mark.line + 1
        if self.depth == MAX_DEPTH:
            raise ConfigError(_TOO_DEEP, file=self.file, line=own_line, hint="flatten the data")
        self.depth += 1
        if isinstance(node, yaml.MappingNode):
            d = self.mapping(node)
            self.depth -= 1
            return d
        lst = located(LList(), self.file, own_line)
        self.memo[key] = lst
        lst.item_lines = [n.start_mark.line + 1 for n in node.value]
        lst.extend(self.convert(n, own_line) for n in node.value)
        self.sizes[key] = 1 + sum(self.size(n) for n in node.value)
        self.depth -= 1
        return lst

    def mapping(self, node: yaml.MappingNode) -> LDict:
        d = located(LDict(), self.file, node.start_mark.line + 1)
        lines: dict[str, int] = {}
        d.key_lines = lines
        self.memo[id(node)] = d
        merge_line = 0
        for k_node, _ in node.value:
            line = k_node.start_mark.line + 1
            if k_node.tag == _MERGE:
                merge_line = line
                continue
            if not isinstance(k_node, yaml.ScalarNode):
                raise ConfigError("a mapping key must be a plain value, not a list or mapping", file=self.file,
                                  line=line, hint="quote the key, or check the indentation")
            k = k_node.value if k_node.tag == _STR else self.key(k_node)
            if k in lines:
                raise ConfigError(f"duplicate key {k!r} (first defined on line {lines[k]})", file=self.file,
                                  line=line, hint="YAML keeps only one of them; remove or rename the other")
            lines[k] = line
        own = lines  # the keys written here
        if merge_line:
            own = dict(lines)
            self.loader.flatten_mapping(node)  # resolves `<<: *anchor` merge keys (explicit keys win)
        for k_node, v_node in node.value:
            k = k_node.value if k_node.tag == _STR else self.key(k_node)
            if k in own:
                d[k] = self.convert(v_node, own[k])
            else:  # merged from an anchor: its line there; what its aliases add is counted at the `<<:`
                lines[k] = k_node.start_mark.line + 1
                d[k] = self.convert(v_node, merge_line)
        self.sizes[id(node)] = 1 + sum(1 + self.size(v) for _, v in node.value)
        return d

    def key(self, node: yaml.Node) -> str:
        k = self.scalar(node)
        return k if isinstance(k, str) else "null" if k is None else str(k)


def parse_yaml(text: str, file: str) -> Any:
    """Parse YAML text; ConfigError with the line for syntax errors (tabs get a specific hint)."""
    check_size(len(text), file)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        return None if node is None else _Converter(loader, file).convert(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 1
        problem = e.problem or str(e)
        hint = "check the indentation and quoting around this line"
        lines = text.splitlines()
        bad_line = lines[mark.line] if mark and mark.line < len(lines) else ""
        if "\t" in bad_line[: mark.column + 1 if mark else 0] or "\t" in problem:
            problem = "a tab character is not allowed here"
            hint = "YAML indentation must use spaces, not tabs"
        if "maximum nesting depth" in problem:  # libyaml's own limit (1,000 levels), reached before ours
            raise ConfigError(_TOO_DEEP, file=file, line=line, hint="flatten the data") from None
        ctx = f" ({e.context})" if e.context else ""
        raise ConfigError(f"invalid YAML: {problem}{ctx}", file=file, line=line, hint=hint) from None
    except yaml.reader.ReaderError as e:  # a control character, NUL byte or lone surrogate
        line = text.count("\n", 0, e.position) + 1
        char = f"character U+{e.character:04X}" if isinstance(e.character, int) else f"byte {e.character!r}"
        raise ConfigError(f"invalid YAML: {char} is not allowed in a YAML file", file=file, line=line,
                          hint="remove it, or write it as an escape such as \"\\u0000\" in a double-quoted "
                               "string") from None
    except yaml.YAMLError as e:  # any other parser error, whatever its words
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        raise ConfigError(f"invalid YAML: {e}", file=file, line=mark.line + 1 if mark else 1,
                          hint="check the file's syntax") from None
    finally:
        loader.dispose()
