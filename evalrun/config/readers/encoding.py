"""Config and test files that are not UTF-8: the error names the first byte that cannot be decoded, at its line.

    bad_byte(data, start, display) -> ConfigError    for text read whole (the byte at `start` of `data`)
    not_utf8(path, display) -> ConfigError           for a file read as a stream, whose decoder fails a whole
                                                     buffer ahead: the file is read again in binary to find it
"""

from __future__ import annotations

from pathlib import Path

from evalrun.errors import ConfigError


def bad_byte(data: bytes, start: int, display: str) -> ConfigError:
    """The error for the undecodable byte at `data[start]`."""
    return ConfigError(f"not UTF-8 text: byte 0x{data[start]:02x} cannot be decoded", file=display,
                       line=data[:start].count(b"\n") + 1,
                       hint="save the file as UTF-8 (binary files cannot be read as config or text)")


def not_utf8(path: str | Path | None, display: str) -> ConfigError:
    """The error for a text file, read as a stream, that is not UTF-8: at the line of its first bad byte (a
    stream's decoder fails a whole buffer ahead, so its position is not that line). Reads in 64 KiB chunks.
    Without a path (a stream of no file) the error names no line."""
    if path is None:
        return ConfigError(f"not UTF-8 text: {display}", file=display, hint="save the file as UTF-8")
    lines, carry, first = 0, b"", True
    with open(path, "rb") as f:
        while chunk := f.read(1 << 16):
            buf = carry + chunk
            if first:
                buf, first = buf.removeprefix(b"\xef\xbb\xbf"), False
            try:
                buf.decode("utf-8")
            except UnicodeDecodeError as e:
                if e.reason == "unexpected end of data" and e.end == len(buf):  # a character cut by the chunk end
                    lines += buf.count(b"\n", 0, e.start)
                    carry = buf[e.start:]
                    continue
                err = bad_byte(buf, e.start, display)
                err.line += lines
                return err
            lines += buf.count(b"\n")
            carry = b""
    return ConfigError(f"not UTF-8 text: {display} ends inside a character", file=display, line=lines + 1,
                       hint="save the file as UTF-8")
