"""`prompts:` in every form (text, `file://` files and globs, `{raw|id, label}`, chat message lists, a map
path-or-text -> label) -> PromptSpecs, their templates syntax-checked here and rendered at run time."""

from __future__ import annotations

import csv
import hashlib
import inspect
import io
import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from evalrun import chats, jsnode, pkgref, templating
from evalrun.config import files
from evalrun.config.readers import read_text
from evalrun.config.readers.located import loc_of
from evalrun.errors import AssertionRuntimeError, ConfigError, Location, lenient_warn
from evalrun.pyexpr import load_function
from evalrun.types import Messages, PromptSpec

DEFAULT_PROMPT = "{{prompt}}"
_SPLIT = re.compile(r"^[ \t]*---[ \t]*\r?$", re.M)
#: A bare string (no whitespace) with one of these endings, or a glob, names a prompt file (as in promptfoo).
_FILE_ENDINGS = (".txt", ".md", ".j2", ".jinja", ".jinja2", ".json", ".jsonl", ".yaml", ".yml", ".csv", ".py", ".js")


def _content_id(raw: str | Messages) -> str:
    text = raw if isinstance(raw, str) else json.dumps(raw, sort_keys=True, ensure_ascii=False)
    return "p-" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:10]


def _json_chat(text: str) -> Messages | None:
    s = text.strip()
    if not (s.startswith("[") and s.endswith("]")) or templating.has_template(s[:2]):
        return None
    return chats.from_json(s)


def check_template(raw: str | Messages, loc: Location | None, key: str) -> None:
    """Every template in a prompt must compile (syntax, unknown filters)."""
    sources = [raw] if isinstance(raw, str) else [m.get("content") for m in raw]
    for src in sources:
        if isinstance(src, str) and templating.has_template(src):
            err = templating.check_syntax(src)
            if err:
                raise ConfigError.at(loc, err, key=key, hint="prompts use Jinja2 syntax: {{ var }}, {% if %}")


def _as_written(raw: str, label: str, loc: Location | None, key: str) -> str:
    """A text prompt with a tag not closed on its line, which promptfoo sends as written (its variables
    unfilled): the same here, with a warning (an error under --strict); any other text as it is."""
    partial = templating.partial_tag(raw)
    if partial is None:
        return raw
    tag, line = partial
    lenient_warn(loc, key, f"prompt {label[:60]!r}: `{tag}` on its template line {line} is not closed on that "
                 "line, so the prompt is sent as written, its variables unfilled, as promptfoo sends it",
                 "close the tag on its line, or wrap literal braces in {% raw %}...{% endraw %} (Handlebars "
                 "`{{#each xs}}` is `{% for x in xs %}` in Nunjucks)")
    return "{% raw %}" + raw + "{% endraw %}"  # renders to the text itself


def _spec(raw: str | Messages, label: str | None, id_: str | None, loc: Location | None, key: str) -> PromptSpec:
    if isinstance(raw, str):
        raw = _json_chat(raw) or raw
    shown = label or (raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False))
    if isinstance(raw, str):
        raw = _as_written(raw, shown, loc, key)
    check_template(raw, loc, key)
    return PromptSpec(raw=raw, label=shown, id=id_ or label or _content_id(raw), loc=loc)


class _JsonTemplate(str):
    """The text of a .json prompt file that is JSON only once rendered (`{% for %}` loops, `{{ x | dump }}`)."""


def _csv_prompts(path: Any, display: str, loc: Location | None, key: str) -> tuple[list[str], list[str | None]]:
    """A CSV prompt file (promptfoo): a `prompt` column (and optional `label`) under a header, or one prompt
    per row in the first column when there is no `prompt` header."""
    rows = [r for r in csv.reader(io.StringIO(read_text(path, display=display, loc=loc, key=key), newline=""))
            if any(c.strip() for c in r)]
    if not rows:
        raise ConfigError.at(loc, f"{display} holds no prompt", key=key)
    header = [c.strip().lower() for c in rows[0]]
    if "prompt" in header:
        at, lab_at = header.index("prompt"), (header.index("label") if "label" in header else None)
        body = rows[1:]
        return ([r[at] if at < len(r) else "" for r in body],
                [(r[lab_at] or None) if lab_at is not None and lab_at < len(r) else None for r in body])
    return [r[0] for r in rows], [None] * len(rows)


def _read_prompt_file(path: Any, display: str, loc: Location | None, key: str) -> Any:
    if path.suffix.lower() == ".json":
        text = read_text(path, display=display, loc=loc, key=key)
        if templating.has_template(text):
            try:
                json.loads(text)
            except ValueError:  # promptfoo renders the text first, then parses the chat it spells
                return _JsonTemplate(text.strip())
    return files.read_value(path, display, loc=loc, key=key)


def _from_file(ref: str, label: str | None, base_dir: str, loc: Location | None, key: str) -> list[PromptSpec]:
    path_s, fn = pkgref.split_ref(ref)
    if files.is_code(path_s):
        path = files.expand(path_s, base_dir, loc=loc, key=key)[0]
        target = load_prompt_function(path, fn, loc=loc, key=key)
        return [PromptSpec(raw=ref, label=label or ref, id=label or ref, loc=loc, function=target)]
    out: list[PromptSpec] = []
    for path in files.expand(path_s, base_dir, loc=loc, key=key):
        display = files.display_path(path)
        rel = os.path.relpath(path, base_dir) if not files.has_glob(path_s) or path.is_absolute() else display
        rel = rel if not rel.startswith("..") else display
        suffix = path.suffix.lower()
        if suffix == ".csv":
            texts, labels = _csv_prompts(path, display, loc, key)
            for text, lab in zip(texts, labels, strict=True):
                out.append(_spec(text, lab or label or f"{rel}: {text[:40]}", None, Location(display, 1), key))
            continue
        data = _read_prompt_file(path, display, loc, key)
        items: list[str | Messages]
        if suffix == ".jsonl":
            items = []
            for n, item in enumerate(data):
                chat = chats.as_chat(item)
                if chat is None:
                    raise ConfigError.at(loc_of(data, n), "each line must be a chat message list", key=display)
                items.append(chat)
        elif isinstance(data, _JsonTemplate):
            items = [str(data)]
        elif suffix in (".json", ".yaml", ".yml"):
            chat = chats.as_chat(data)
            if chat is None and not isinstance(data, str):
                raise ConfigError.at(loc, f"{display} must hold a chat message list [{{role, content}}, ...]",
                                     key=key, hint="or use a .txt file for a text prompt")
            items = [chat if chat is not None else data]
        elif suffix in (".j2", ".md", ".jinja", ".jinja2"):
            items = [data]
        else:  # .txt (and other text): `---` lines separate prompts, each trimmed (promptfoo's rule)
            items = [p.strip() for p in _SPLIT.split(data) if p.strip()]
        many = len(items) > 1
        lab = label or rel
        for i, raw in enumerate(items):
            spec = _spec(raw, f"{lab} [{i + 1}]" if many else lab, f"file://{rel}" + (f"#{i + 1}" if many else ""),
                         Location(display, 1), key)
            out.append(replace(spec, group=lab) if many else spec)
    return out


def looks_like_path(text: str) -> bool:
    """`prompts/main.txt` or `prompts/*.txt` without `file://`: a path, as promptfoo reads it."""
    if not text or any(c.isspace() for c in text) or templating.has_template(text):
        return False
    return text.lower().endswith(_FILE_ENDINGS) or files.has_glob(text.replace("[", ""))


def _item(item: Any, label: str | None, base_dir: str, loc: Location | None, key: str) -> list[PromptSpec]:
    if isinstance(item, str):
        if files.is_ref(item) or looks_like_path(item):
            return _from_file(item, label, base_dir, loc, key)
        return [_spec(item, label, None, loc, key)]
    chat = chats.as_chat(item)
    if chat is not None:
        return [_spec(chat, label, None, loc, key)]
    if isinstance(item, dict):
        config = item.get("config") or {}
        if not isinstance(config, dict):
            raise ConfigError.at(loc_of(item, "config") or loc, "a prompt's `config` must be a mapping",
                                 key=f"{key}.config", hint="e.g. config: {temperature: 0}")
        found = _prompt_object(item, label, base_dir, loc, key)
        return [replace(p, config=dict(config)) for p in found] if config else found
    raise ConfigError.at(loc, f"cannot read a prompt from {item!r}", key=key)


def _prompt_object(item: dict[str, Any], label: str | None, base_dir: str, loc: Location | None,
                   key: str) -> list[PromptSpec]:
    """`{raw|id, label}` -> its prompt(s)."""
    lab = item.get("label", label)
    raw = item.get("raw")
    if isinstance(raw, str) and files.is_ref(raw):  # {raw: file://prompt.txt}: the file's prompt(s)
        found = _from_file(raw, lab, base_dir, loc, f"{key}.raw")
        if item.get("id") and len(found) == 1:
            found = [PromptSpec(raw=found[0].raw, label=found[0].label, id=str(item["id"]), loc=found[0].loc)]
        return found
    if "raw" in item:
        return [_spec(item["raw"], lab, item.get("id"), loc, key)]
    if "id" in item:
        return _item(item["id"], lab, base_dir, loc, key)
    raise ConfigError.at(loc, "a prompt object needs `raw` (the text) or `id` (a file:// path)", key=key)


def parse(node: Any, base_dir: str, *, loc: Location | None) -> list[PromptSpec]:
    """The `prompts:` value of one config file."""
    if node is None:
        return []
    if isinstance(node, str):
        return _item(node, None, base_dir, loc, "prompts")
    if isinstance(node, dict):  # {path or text: label}
        return [p for k, v in node.items() for p in _item(k, str(v), base_dir, loc_of(node, k) or loc, f"prompts.{k}")]
    return [p for i, item in enumerate(node) for p in _item(item, None, base_dir, loc_of(node, i) or loc,
                                                             f"prompts[{i}]")]


def load_prompt_function(path: Path, fn: str | None, *, loc: Location | None, key: str) -> str:
    """A prompt function (.js, .py, .ts, ...) as `file:///abs/path[:fn]`, checked to load (else ConfigError)."""
    suffix = path.suffix.lower()
    ref = "file://" + str(path.resolve()) + (f":{fn}" if fn else "")
    if suffix == ".py":
        load_function(str(path), fn or "get_prompt", loc=loc, key=key)
        return ref
    if suffix not in jsnode.JS_EXTS:
        raise ConfigError.at(loc, f"prompt functions in {suffix} files are not supported ({path.name})", key=key,
                             hint="write the function in JavaScript (.js/.mjs), TypeScript (.ts) or Python (.py)")
    jsnode.require_js(path, fn, loc=loc, key=key, what=f"the prompt function {path.name}",
                          instead="write the prompt as a template")
    try:
        jsnode.check_export(ref)
    except AssertionRuntimeError as e:
        raise ConfigError.at(loc, f"loading the prompt function failed: {e}", key=key,
                             hint="export it: `module.exports.myPrompt = ({vars}) => ...` and write "
                                  "file://prompts.js:myPrompt") from None
    return ref


def _result(value: Any, ref: str) -> tuple[str | Messages, dict[str, Any]]:
    config: dict[str, Any] = {}
    if isinstance(value, dict) and "prompt" in value:
        config = dict(value.get("config") or {})
        value = value["prompt"]
    if isinstance(value, str):  # a JSON chat written as text, as promptfoo reads it
        chat = chats.from_json(value) if value.lstrip().startswith("[") else None
        return chat or value, config
    chat = chats.as_chat(value)
    if chat is not None:
        return chat, config
    if value is None:
        raise AssertionRuntimeError(f"prompt function {ref.rsplit('/', 1)[-1]} returned nothing")
    return json.dumps(value, ensure_ascii=False), config


async def build_prompt(ref: str, vars: dict[str, Any], provider: dict[str, Any]) -> tuple[str | Messages,
                                                                                          dict[str, Any]]:
    """Call a prompt function for one case with promptfoo's `{vars, provider}`: it returns a string, a chat message
    list, or `{prompt, config}`; AssertionRuntimeError when it fails."""
    context = {"vars": vars, "provider": provider}
    path, fn = pkgref.split_ref(ref)
    if path.lower().endswith(".py"):
        func = load_function(path, fn or "get_prompt", key="prompts")
        try:
            value = func(context)
            if inspect.isawaitable(value):
                value = await value
        except Exception as e:
            raise AssertionRuntimeError(f"prompt function {os.path.basename(path)}: {type(e).__name__}: {e}") \
                from None
        return _result(value, ref)
    value = await jsnode.call_js_args(ref, [context], what=f"prompt function {os.path.basename(path)}")
    return _result(value, ref)
