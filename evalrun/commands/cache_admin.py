"""`evalrun cache stats|clear`: inspect or empty the on-disk response cache (never imports litellm)."""

from __future__ import annotations

import argparse

from evalrun.cache import ResponseCache


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover


def run(args: argparse.Namespace) -> int:
    cache = ResponseCache()
    try:
        if args.action == "clear":
            removed = cache.clear()
            print(f"cleared {removed} cached response{'s' if removed != 1 else ''} from {cache.path}")
            return 0
        stats = cache.stats()
        print(f"cache: {stats['path']}")
        if not stats["exists"]:
            print("entries: 0 (no cache file yet: nothing has been cached)")
            return 0
        print(f"entries: {stats['entries']}\nhits: {stats['hits']}\nsize: {_size(stats['bytes'])}")
        for model, count in stats["models"].items():
            print(f"  {model}: {count}")
        return 0
    finally:
        cache.close()
