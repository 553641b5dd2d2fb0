"""Finding and checking ``path:line`` citations in an answer, against the index (no model)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from moot.codeindex import CodeIndex
from moot.codeindex.walk import MAX_CODE_BYTES
from moot.errors import MootError
from moot.files import read_text

# A relative path with an extension, then :line or :start-end. Backticks and brackets around
# it are common in model output and are not part of the citation.
_CITATION = re.compile(r"(?<![\w/.])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,5}):(\d+)(?:\s*[-–]\s*(\d+))?")


@dataclass(frozen=True)
class Citation:
    text: str
    path: str
    start: int
    end: int
    span: tuple[int, int]


def find_citations(text: str) -> list[Citation]:
    out = []
    for m in _CITATION.finditer(text):
        start = int(m.group(2))
        end = int(m.group(3)) if m.group(3) else start
        out.append(Citation(m.group(0), m.group(1), start, max(start, end), m.span()))
    return out


def file_lines(index: CodeIndex, path: str) -> int | None:
    """How many lines ``path`` has in the indexed tree; ``None`` when it is not an indexed file."""
    try:
        text = index.read_file(path, 1, 1)
    except Exception:  # not indexed, outside the root, a folder: all mean "does not exist" here
        return None
    m = re.search(r"of (\d+)", text)
    if m:
        return int(m.group(1))
    return _count_lines(index, path)


def _count_lines(index: CodeIndex, path: str) -> int | None:
    try:  # a path the model wrote: read only a regular file that stays under the index's root
        full = read_text(path, root=index.root, max_bytes=MAX_CODE_BYTES)
    except MootError:
        return None
    return full.count("\n") + (0 if full.endswith("\n") else 1)


def exists(index: CodeIndex, citation: Citation) -> bool:
    """Whether the cited file is indexed and the cited lines are inside it."""
    n = file_lines(index, citation.path)
    return n is not None and 1 <= citation.start <= n
