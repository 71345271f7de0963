"""Whether any installed package can declare an assertion plugin, answered without importlib.metadata.

    none_installed(group) -> bool

`importlib.metadata.entry_points(group=...)` costs ~30 ms on every start-up that builds an assertion (importing
importlib.metadata pulls in email, zipfile and csv; then every distribution's metadata is parsed), and almost
always finds nothing. It finds its distributions with the standard path finder: the `*.dist-info` / `*.egg-info`
folders of each folder on sys.path, whose `entry_points.txt` names the groups. When no such file mentions the
group, it cannot find an entry point of it: `none_installed` is True and the caller may skip it. Anything this
scan does not read the way importlib.metadata does (a zip file or an `.egg` on sys.path, another finder that
finds distributions) answers False, and the caller asks importlib.metadata.
"""

from __future__ import annotations

import os
import sys

_INFO = (".dist-info", ".egg-info")


def none_installed(group: str) -> bool:
    """True when surely no installed distribution declares an entry point of `group`; False when one may."""
    from importlib.machinery import PathFinder

    for finder in sys.meta_path:
        if finder is not PathFinder and getattr(finder, "find_distributions", None) is not None:
            return False  # distributions found some other way: only importlib.metadata knows them
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except NotADirectoryError:
            return False  # a zip file: importlib.metadata reads distributions inside it
        except OSError:
            continue  # missing or unreadable: importlib.metadata finds nothing there either
        if os.path.basename(root).lower().endswith(".egg"):
            return False  # an unpacked egg: its EGG-INFO folder holds the metadata
        for child in children:
            if child.lower().endswith(_INFO):
                try:
                    with open(os.path.join(root, child, "entry_points.txt"), encoding="utf-8",
                              errors="replace") as f:
                        text = f.read()
                except OSError:  # no entry points (or an egg-info file, not a folder)
                    continue
                if group in text:  # its section may be there (a superset of what importlib.metadata reads)
                    return False
    return True
