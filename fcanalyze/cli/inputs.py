"""What the command line reads and where it writes, checked before any work starts.

- A SOURCE that looks like a number is a deal number, never a file (a file named ``5`` is ``./5``);
  ``-`` is stdin; anything else is a board file.
- Input files are read bounded: a board or a list of moves may be at most `MAX_POSITION_BYTES`, a
  list of deals `MAX_LIST_BYTES`; a larger file is refused by its size before it is read (stdin: after
  reading one byte past the limit).
- Text is decoded as a text editor writes it: UTF-8 (with or without a byte-order mark), UTF-16 or
  UTF-32 with a byte-order mark; CRLF and CR line ends read as LF. Anything else (a binary file, UTF-16
  without a byte-order mark, Latin-1 with accented letters) is refused with one line.
- An output directory (``--out``) or file (``manifest -o``) that cannot be created is refused with
  one line before anything is computed.
"""

from __future__ import annotations

import codecs
import os
import stat
import sys
import tempfile
from pathlib import Path

from fcanalyze.board import layout_from_json, parse_board
from fcanalyze.cli.errors import BadInput
from fcanalyze.deals import looks_like_deal_number, parse_deal_number

#: The largest board or moves file read (a position is a few hundred bytes, a game's moves a few KB).
MAX_POSITION_BYTES = 1 << 20
#: The largest file of deal numbers read (``verify-unsolvable --expected``).
MAX_LIST_BYTES = 64 << 20

#: Byte-order marks and their codecs, longest first (UTF-32 LE's starts with UTF-16 LE's).
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)


def _size(n: int) -> str:
    return f"{n >> 20} MB" if n >= 1 << 20 else f"{n:,} bytes"


def read_bytes(source: str | Path, limit: int) -> bytes:
    """The bytes of file `source` (``-``: stdin), refused with one line past `limit` bytes."""
    name = "stdin" if str(source) == "-" else str(source)
    too_big = f"{name} is larger than {_size(limit)}; refused without reading it"
    if str(source) == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        data = (
            stdin.read(limit + 1) if stdin else sys.stdin.read(limit + 1).encode("utf-8", "surrogateescape")
        )
    else:
        try:
            with open(source, "rb") as f:
                info = os.fstat(f.fileno())
                if stat.S_ISDIR(info.st_mode):
                    raise BadInput(f"{name} is a directory, not a file")
                if stat.S_ISREG(info.st_mode) and info.st_size > limit:
                    raise BadInput(too_big)
                data = f.read(limit + 1)
        except (OSError, ValueError) as e:
            raise BadInput(f"cannot read {name}: {getattr(e, 'strerror', None) or e}") from None
    if len(data) > limit:
        raise BadInput(too_big)
    return data


def decode(data: bytes, name: str) -> str:
    """Text as an editor saved it (see the module's docstring), with LF line ends; `BadInput` if not."""
    codec = next((c for bom, c in _BOMS if data.startswith(bom)), "utf-8")
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as e:
        if codec == "utf-8" and _utf16_without_bom(data):
            raise BadInput(f"{name}: UTF-16 text without a byte-order mark; save it as UTF-8") from None
        raise BadInput(
            f"{name}: not text in {codec.upper().removesuffix('-SIG')} "
            f"(byte 0x{data[e.start]:02x} at offset {e.start}); save it as UTF-8"
        ) from None
    if "\0" in text:
        if _utf16_without_bom(data):
            raise BadInput(f"{name}: UTF-16 text without a byte-order mark; save it as UTF-8")
        raise BadInput(f"{name}: a binary file, not text")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _utf16_without_bom(data: bytes) -> bool:
    """Mostly ASCII in UTF-16: every other byte zero."""
    return len(data) >= 2 and max(data[0::2].count(0), data[1::2].count(0)) >= len(data) // 2 * 0.9


def read_text(source: str | Path, limit: int = MAX_POSITION_BYTES) -> str:
    """The text of file `source` (``-``: stdin): bounded, decoded, with LF line ends."""
    return decode(read_bytes(source, limit), "stdin" if str(source) == "-" else str(source))


def load_source(source: str) -> tuple[int | dict, str]:
    """A deal number, or a layout read from a board file (``-`` for stdin; JSON or board text), with
    how to name it in messages."""
    if looks_like_deal_number(source):
        try:
            n = parse_deal_number(source)
        except ValueError as e:
            raise BadInput(str(e)) from None
        return n, f"deal {n}"
    if source != "-" and not os.path.exists(source):
        raise BadInput(f"{source!r} is neither a deal number nor a board file")
    text = read_text(source)
    name = "stdin" if source == "-" else source
    try:
        layout = layout_from_json(text) if text.lstrip().startswith("{") else parse_board(text)
    except ValueError as e:
        raise BadInput(f"{name}: {e}") from None
    return layout, name


def _existing_ancestor(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not os.path.exists(path) and path.parent != path:
        path = path.parent
    return path


def output_directory(path: Path, option: str = "--out") -> Path:
    """Create output directory `path` (and its parents) if it is not there, or refuse it with one line:
    under a file, in a place that takes no directories (/proc), not writable."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise BadInput(f"{option} {path}: a file is in the way (expected a directory)")
    above = _existing_ancestor(path)
    if not os.path.isdir(above):
        raise BadInput(f"{option} {path}: {above} is a file, not a directory")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except (OSError, ValueError) as e:
        raise BadInput(f"{option} {path}: cannot write there ({getattr(e, 'strerror', None) or e})") from None
    return path


def output_file(path: Path, option: str = "--output") -> Path:
    """Refuse with one line an output file that cannot be written (a directory in its place, a file
    where its directory should be, a place that takes no files), creating its directory if needed."""
    if os.path.isdir(path):
        raise BadInput(f"{option} {path}: a directory is in the way (expected a file)")
    above = _existing_ancestor(path.parent)
    if not os.path.isdir(above):
        raise BadInput(f"{option} {path}: {above} is a file, not a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except (OSError, ValueError) as e:
        raise BadInput(f"{option} {path}: cannot write there ({getattr(e, 'strerror', None) or e})") from None
    return path
