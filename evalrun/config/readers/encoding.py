"""Config and test files that are not UTF-8: the error names the first byte that cannot be decoded, at its line."""

from __future__ import annotations

from pathlib import Path

from evalrun.errors import ConfigError


def bad_byte(data: bytes, start: int, display: str) -> ConfigError:
    """The error for the undecodable byte at `data[start]`."""
    return ConfigError(f"not UTF-8 text: byte 0x{data[start]:02x} cannot be decoded", file=display,
                       line=data[:start].count(b"\n") + 1,
                       hint="save the file as UTF-8 (binary files cannot be read as config or text)")


def not_utf8(path: str | Path | None, display: str) -> ConfigError:
    """The error for a file read as a stream that is not UTF-8 (its decoder fails a whole buffer ahead of the bad
    byte): the file is read again whole to find that byte's line. Without a path, the error names no line."""
    if path is None:
        return ConfigError(f"not UTF-8 text: {display}", file=display, hint="save the file as UTF-8")
    data = Path(path).read_bytes().removeprefix(b"\xef\xbb\xbf")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        return bad_byte(data, e.start, display)
    return ConfigError(f"not UTF-8 text: {display}", file=display, hint="save the file as UTF-8")  # pragma: no cover
