"""A faster `__init__` for frozen dataclasses made on the per-case path: one `__dict__` assignment instead of an
`object.__setattr__` per field (same signature, defaults, object). Why it stays: ~15 µs of ~97 µs CPU per case,
~1.5 s of a 100,000-row run (docs/design-notes.md)."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


class _Missing:
    def __repr__(self) -> str:
        return "<factory default>"


_MISSING = _Missing()


def fast_init(cls: type[T]) -> type[T]:
    """Give the frozen dataclass `cls` an `__init__` that sets its `__dict__` in one go (see module doc)."""
    params = getattr(cls, "__dataclass_params__", None)
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if (params is None or not params.frozen or "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__")
            or any(not f.init or f.kw_only for f in fields)):
        return cls
    ns: dict[str, Any] = {"_set": object.__setattr__, "_MISSING": _MISSING}
    args: list[str] = []
    lines: list[str] = []
    for f in fields:
        if f.default is not dataclasses.MISSING:
            ns[f"_d_{f.name}"] = f.default
            args.append(f"{f.name}=_d_{f.name}")
        elif f.default_factory is not dataclasses.MISSING:
            ns[f"_f_{f.name}"] = f.default_factory
            args.append(f"{f.name}=_MISSING")
            lines.append(f"    if {f.name} is _MISSING: {f.name} = _f_{f.name}()")
        else:
            args.append(f.name)
    items = ", ".join(f"{f.name!r}: {f.name}" for f in fields)
    src = (f"def __init__(self, {', '.join(args)}):\n" + "".join(line + "\n" for line in lines)
           + f"    _set(self, '__dict__', {{{items}}})\n")
    exec(src, ns)  # noqa: S102 - generated from the class's own field names, as dataclasses itself does
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
