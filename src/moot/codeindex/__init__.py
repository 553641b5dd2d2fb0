"""The code index: tree-sitter chunks and symbols of a source tree in SQLite, searched by BM25
(and optionally embeddings), with a repo map and tools confined to the indexed root.

```python
from moot.codeindex import CodeIndex
with CodeIndex.build("path/to/repo") as idx:          # incremental: unchanged files are skipped
    for hit in idx.search("read file"):
        print(hit.header())
```

See docs/codeindex.md.
"""

from __future__ import annotations

from moot.codeindex.builder import BuildReport, IndexProgress
from moot.codeindex.flow import Decision
from moot.codeindex.index import MODES, CodeIndex, check_root
from moot.codeindex.results import CodeHit, SymbolInfo
from moot.codeindex.sandbox import PathEscapeError

__all__ = [
    "MODES",
    "BuildReport",
    "CodeHit",
    "CodeIndex",
    "Decision",
    "IndexProgress",
    "PathEscapeError",
    "SymbolInfo",
    "check_root",
]
