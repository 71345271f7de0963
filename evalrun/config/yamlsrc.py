"""Read YAML / JSON / JSONL with a line number kept for every mapping key and list item.

Mappings become `LDict` and sequences `LList`: plain dict/list subclasses that also know their file, their
own line and the line of each key / item, so any error can be reported as FILE:LINE. Duplicate keys are an
error (PyYAML accepts them silently). Scalars are plain Python values.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from evalrun.config.limits import MAX_DEPTH, AliasBudget, check_depth, json_depth, may_exceed
from evalrun.errors import ConfigError, Location

try:  # libyaml is much faster; fall back to the pure-Python loader
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]


_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"


class _Loader(_BaseLoader):
    """YAML 1.2 core-schema scalars, as promptfoo's js-yaml reads them.

    PyYAML follows YAML 1.1, where `yes`/`no`/`on`/`off` are booleans, `012` is octal and `1:30` is 90;
    in promptfoo (and here) they are the strings and the decimal number the author wrote.
    """

    yaml_implicit_resolvers: dict[Any, Any] = {}

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:  # no path resolvers: skip
        return None

    def ascend_resolver(self) -> None:
        return None

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        """PyYAML's resolve without path resolvers (called once per node by the composer)."""
        if kind is yaml.ScalarNode:
            if implicit[0]:
                for tag, regexp in self.yaml_implicit_resolvers.get(value[:1], ()):
                    if regexp.match(value):
                        return tag
            return _STR
        return _SEQ if kind is yaml.SequenceNode else _MAP


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
    if tag.endswith(":int"):
        if value.startswith("0o"):
            return int(value[2:], 8)
        return int(value, 16) if value.startswith("0x") else int(value, 10)
    lower = value.lower()
    if lower.endswith("inf"):
        return float("-inf") if lower.startswith("-") else float("inf")
    return float("nan") if lower == ".nan" else float(value)


class LDict(dict[str, Any]):
    """A mapping that remembers where it and each of its keys came from."""

    file: str = ""
    line: int = 0
    key_lines: dict[str, int]
    ref_free: bool = False  # a config file whose text holds no `$ref` (set by load_config_file)

    def loc(self, key: str | None = None) -> Location:
        """Location of `key` (or of the mapping itself)."""
        lines = getattr(self, "key_lines", {})
        return Location(self.file, lines.get(key, self.line) if key is not None else self.line)


class LList(list[Any]):
    """A sequence that remembers where it and each of its items came from."""

    file: str = ""
    line: int = 0
    item_lines: list[int]

    def loc(self, index: int | None = None) -> Location:
        lines = getattr(self, "item_lines", [])
        if index is not None and 0 <= index < len(lines):
            return Location(self.file, lines[index])
        return Location(self.file, self.line)


def loc_of(node: Any, key: str | int | None = None) -> Location | None:
    """Location of `node[key]` (or `node`) when `node` came from a tracked file, else None."""
    if isinstance(node, LDict):
        return node.loc(key if isinstance(key, str) else None)
    if isinstance(node, LList):
        return node.loc(key if isinstance(key, int) else None)
    return None


_KEY_PART = re.compile(r"[^.\[\]]+|\[\d+\]")


def loc_of_path(node: Any, path: str) -> tuple[Location | None, int]:
    """(location of the deepest part of the key path `path` ("vars.q", "[3].assert[0].value") found in `node`,
    how many parts were found); (None, 0) when not even the first is there."""
    found, depth = None, 0
    for part in _KEY_PART.findall(path):
        if isinstance(node, LDict) and part in node:
            found, node = node.loc(part), node[part]
        elif isinstance(node, LList) and part.startswith("[") and int(part[1:-1]) < len(node):
            found, node = node.loc(int(part[1:-1])), node[int(part[1:-1])]
        else:
            break
        depth += 1
    return found, depth


_MERGE = "tag:yaml.org,2002:merge"
_KNOWN = frozenset(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float"))


def _tag(obj: Any, file: str, line: int) -> Any:
    obj.file, obj.line = file, line
    return obj


class _Converter:
    """Turns a composed YAML node tree into LDict/LList/scalars, checking duplicate keys.

    An alias shares the already converted value; the values it adds once expanded are counted against
    an AliasBudget (alias bombs), and an alias inside its own anchor is an error (it would expand forever).
    """

    def __init__(self, loader: Any, file: str) -> None:
        self.loader = loader
        self.file = file
        self.memo: dict[int, Any] = {}
        self.sizes: dict[int, int] = {}  # id(node) -> number of values once expanded
        self.budget = AliasBudget(file)

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
            self.budget.spend(self.sizes[key], line or node.start_mark.line + 1)
            return self.memo[key]
        if isinstance(node, yaml.MappingNode):
            return self.mapping(node)
        own_line = node.start_mark.line + 1
        lst = _tag(LList(), self.file, own_line)
        self.memo[key] = lst
        lst.item_lines = [n.start_mark.line + 1 for n in node.value]
        lst.extend(self.convert(n, own_line) for n in node.value)
        self.sizes[key] = 1 + sum(self.size(n) for n in node.value)
        return lst

    def mapping(self, node: yaml.MappingNode) -> LDict:
        d = _tag(LDict(), self.file, node.start_mark.line + 1)
        lines: dict[str, int] = {}
        d.key_lines = lines
        self.memo[id(node)] = d
        merge = False
        for k_node, _ in node.value:
            if k_node.tag == _MERGE:
                merge = True
                continue
            line = k_node.start_mark.line + 1
            if not isinstance(k_node, yaml.ScalarNode):
                raise ConfigError("a mapping key must be a plain value, not a list or mapping", file=self.file,
                                  line=line, hint="quote the key, or check the indentation")
            k = self.scalar(k_node)
            k = k if isinstance(k, str) else "null" if k is None else str(k)
            if k in lines:
                raise ConfigError(f"duplicate key {k!r} (first defined on line {lines[k]})", file=self.file,
                                  line=line, hint="YAML keeps only one of them; remove or rename the other")
            lines[k] = line
        if not merge:
            for k_node, v_node in node.value:
                k = k_node.value if k_node.tag == _STR else str(self.scalar(k_node))
                d[k] = self.convert(v_node, k_node.start_mark.line + 1)
            self.sizes[id(node)] = 1 + sum(1 + self.size(v) for _, v in node.value)
            return d
        own = dict(lines)
        merge_line = next((k.start_mark.line + 1 for k, _ in node.value if k.tag == _MERGE), d.line)
        self.loader.flatten_mapping(node)  # resolves `<<: *anchor` merge keys (explicit keys win)
        for k_node, v_node in node.value:
            k = self.scalar(k_node)
            k = k if isinstance(k, str) else "null" if k is None else str(k)
            d[k] = self.convert(v_node, own.get(k, merge_line))
            lines[k] = own.get(k, k_node.start_mark.line + 1)
        self.sizes[id(node)] = 1 + sum(1 + self.size(v) for _, v in node.value)
        return d


_EVENTS_MIN_CHARS = 256 * 1024  # = yamlevents.MIN_CHARS (not imported: yamlevents imports this module)


def parse_yaml(text: str, file: str) -> Any:
    """Parse YAML text; ConfigError with the line for syntax errors (tabs get a specific hint)."""
    loader = _Loader(text)
    try:
        check_depth(text, file, lambda t: yaml.parse(t, Loader=_BaseLoader))
        if len(text) >= _EVENTS_MIN_CHARS:  # large: built from parser events, no node tree (yamlevents.py)
            from evalrun.config import yamlevents

            built = yamlevents.build(text, file)
            if built is not yamlevents.FALLBACK:
                return built
        node = loader.get_single_node()
        return None if node is None else _Converter(loader, file).convert(node)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark else 0
        problem = e.problem or str(e)
        hint = "check the indentation and quoting around this line"
        lines = text.splitlines()
        bad_line = lines[mark.line] if mark and mark.line < len(lines) else ""
        if "\t" in bad_line[: mark.column + 1 if mark else 0] or "\t" in problem:
            problem = "a tab character is not allowed here"
            hint = "YAML indentation must use spaces, not tabs"
        ctx = f" ({e.context})" if e.context else ""
        raise ConfigError(f"invalid YAML: {problem}{ctx}", file=file, line=line, hint=hint) from None
    except yaml.reader.ReaderError as e:  # a control character, NUL byte or lone surrogate
        line = text.count("\n", 0, e.position) + 1
        char = f"character U+{e.character:04X}" if isinstance(e.character, int) else f"byte {e.character!r}"
        raise ConfigError(f"invalid YAML: {char} is not allowed in a YAML file", file=file, line=line,
                          hint="remove it, or write it as an escape such as \"\\u0000\" in a double-quoted "
                               "string") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"invalid YAML: {e}", file=file, hint="check the file's syntax") from None
    except RecursionError:  # a safety net: the depth limit should make this unreachable
        raise ConfigError("the file is nested too deeply to read", file=file, line=1,
                          hint="flatten its lists and mappings") from None
    finally:
        loader.dispose()


def read_text(path: Path, *, display: str, loc: Location | None = None, key: str | None = None) -> str:
    """Read a UTF-8 text file; missing/unreadable files are ConfigErrors at `loc`."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise ConfigError.at(loc, f"file not found: {display}", key=key,
                             hint="paths are relative to the config file's folder") from None
    except IsADirectoryError:
        raise ConfigError.at(loc, f"{display} is a folder, not a file", key=key,
                             hint="use a glob such as dir/*.yaml") from None
    except UnicodeDecodeError as e:
        from evalrun.config.encoding import bad_byte

        raise bad_byte(e.object, e.start, display) from None
    except OSError as e:
        raise ConfigError.at(loc, f"cannot read {display}: {e}", key=key) from None




def parse_json(text: str, file: str) -> Any:
    """Parse JSON (json.loads words the syntax errors), then read it again with line numbers (jsonlines.py)."""
    check_depth(text, file, lambda t: yaml.parse(t, Loader=_BaseLoader), brackets_only=True)
    from evalrun.config import jsonlines

    if len(text) >= jsonlines.SHALLOW_MIN_CHARS:  # large: lines for the top levels, errors located on demand
        shallow = jsonlines.parse_shallow(text, file)
        if shallow is not jsonlines.FALLBACK:
            return shallow
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise ConfigError(f"invalid JSON: {e.msg}", file=file, line=e.lineno,
                          hint="check commas, quotes and brackets") from None
    except RecursionError:
        raise ConfigError("the file is nested too deeply to read", file=file, line=1,
                          hint="flatten its lists and mappings") from None
    del data
    return jsonlines.parse(text, file)  # the same data, with line numbers (duplicate keys are an error)


def parse_jsonl(text: str, file: str) -> LList:
    """One JSON value per non-blank line; each item's line is its own line."""
    out = _tag(LList(), file, 1)
    out.item_lines = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
            too_deep = may_exceed(line) and json_depth(value) > MAX_DEPTH
        except json.JSONDecodeError as e:
            raise ConfigError(f"invalid JSON on this line: {e.msg} (column {e.colno})", file=file, line=n,
                              hint="JSONL needs one complete JSON object per line") from None
        except RecursionError:
            too_deep = True
        if too_deep:
            raise ConfigError(f"lists and mappings are nested more than {MAX_DEPTH} levels deep", file=file,
                              line=n, hint="flatten the data")
        if isinstance(value, dict):
            ld = _tag(LDict(value), file, n)
            ld.key_lines = {k: n for k in value}
            value = ld
        out.append(value)
        out.item_lines.append(n)
    return out


def parse_data(text: str, file: str) -> Any:
    """Parse by extension: .json, .jsonl, else YAML."""
    lower = file.lower()
    if lower.endswith(".jsonl"):
        return parse_jsonl(text, file)
    if lower.endswith(".json"):
        return parse_json(text, file)
    return parse_yaml(text, file)


def load_config_file(path: Path, display: str) -> LDict:
    """Read a config file: must exist, be non-empty, and hold a mapping."""
    text = read_text(path, display=display)
    data = parse_data(text, display)
    if data is None:
        raise ConfigError("the config file is empty", file=display, line=1,
                          hint="a config needs at least `prompts`, `providers` and `tests`")
    if not isinstance(data, LDict):
        kind = "list" if isinstance(data, list) else type(data).__name__
        raise ConfigError(f"the config must be a mapping of keys (prompts, providers, tests, ...), not a {kind}",
                          file=display, line=getattr(data, "line", 1) or 1,
                          hint="start the file with keys such as `prompts:`")
    # `$ref` cannot be written without those four characters in a row, an escape of `$` or an escaped line break
    # inside a quoted YAML key: without them, refs.resolve need not walk the document
    data.ref_free = "$ref" not in text and _DOLLAR_ESCAPE.search(text) is None and "\\\n" not in text
    return data


_DOLLAR_ESCAPE = re.compile(r"\\(?:u0024|x24|U00000024)", re.IGNORECASE)
