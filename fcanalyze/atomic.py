"""Files written whole or not at all, and their checksums.

A file is written to a temporary name beside it (``.NAME.XXXX.tmp``), fsynced, then renamed over its
name: a reader sees the old file or the new one, never half of one. A killed writer leaves only its
temporary file, which `remove_stale_temporaries` clears.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: The process's umask, read once at import (reading it means setting it).
_UMASK = _umask()


def write(path: Path, writer: Callable[[str], Any]) -> None:
    """Call ``writer(tmp_path)`` then rename the temporary file over `path` (same directory, fsynced)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        writer(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp's 0600 would make shared output unreadable to others
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text(path: Path, text: str) -> None:
    """Write a text file atomically."""
    write(path, lambda tmp: Path(tmp).write_text(text))


def write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically (indented, newline-terminated)."""
    write_text(path, json.dumps(obj, indent=1) + "\n")


def why_not_writable(path: Path, e: OSError) -> str:
    """A few words on why `path` could not be written: a file where a directory is needed (``mkdir``
    then says "File exists" or "Not a directory"), or the error's own text."""
    for parent in Path(path).absolute().parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is not a directory"
            break
    return f"{e.strerror or e}: {e.filename}" if e.filename else str(e.strerror or e)


def remove_stale_temporaries(out: Path) -> int:
    """Remove the temporary files a killed run left behind in `out` and its directories (never read,
    since a file only takes its name once complete). Returns how many."""
    stale = [*out.glob(".*.tmp"), *out.glob("*/.*.tmp")]
    for p in stale:
        p.unlink(missing_ok=True)
    return len(stale)
