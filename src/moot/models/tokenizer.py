"""The embedded model's own tokenizer, read from its GGUF weights file, to count prompt tokens.

A budget holds room for a prompt before it is sent. moot's estimate (3.5 characters a token)
is a guess; for the embedded model the real count is at hand, because the weights file carries
the tokenizer: Qwen2.5 is a byte-level BPE (the GPT-2 scheme), so the merge list in the file's
metadata and the pre-tokenizer's split rule give the exact count of a text. Only the metadata
is read (a few MB at the start of the file), once per file per process.

:func:`count_chat_tokens` counts a request as the chat template lays it out (ChatML: a header
and an end marker around every message, the tool list in the template's own words); the engine's
own report of each answer's prompt tokens still corrects the budget from then on.
"""

from __future__ import annotations

import json
import re
import struct
import threading
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

_TYPES = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_WANTED = ("tokenizer.ggml.model", "tokenizer.ggml.pre", "tokenizer.ggml.merges")
_HEADER_READ = 32 << 20
"""Metadata is at the start of the file; the 0.5B model's vocabulary and merges take about 6 MB."""

# The Qwen2 pre-tokenizer's split rule, written for Python's ``re`` (which has no \p{L}/\p{N}):
# a letter is ``[^\W\d_]``, a number ``\d``, "neither" is ``[^\w]`` or ``_``.
_SPLIT = re.compile(
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)"
    r"|(?:[^\w\r\n]|_)?[^\W\d_]+"
    r"|\d"
    r"| ?(?:[^\w\s]|_)+[\r\n]*"
    r"|\s*[\r\n]+"
    r"|\s+(?!\S)"
    r"|\s+"
)

MESSAGE_OVERHEAD = 5
"""``<|im_start|>`` + role + newline before a message, ``<|im_end|>`` + newline after it."""
REPLY_HEADER = 3
"""``<|im_start|>assistant\\n``, where the answer starts."""
DEFAULT_SYSTEM = "You are Qwen, created by Alibaba Cloud. You are a helpful assistant."
"""What Qwen2.5's chat template puts first when a request has no system message."""
TOOLS_PREAMBLE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n"
    "</tool_call>"
)
"""The words Qwen2.5's chat template adds to the system message when a request lists tools."""


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from bytes to printable characters (how byte-level BPE vocabularies are written)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars), strict=True))


_BYTE_CHARS = _bytes_to_unicode()


class GGUFError(ValueError):
    """The file is not a GGUF file moot can read a tokenizer from."""


def read_metadata(path: str | Path, keys: Iterable[str] = _WANTED) -> dict[str, Any]:
    """The GGUF metadata values named by ``keys`` (arrays of strings as lists)."""
    wanted = set(keys)
    with open(path, "rb") as handle:
        data = handle.read(_HEADER_READ)
    if data[:4] != b"GGUF":
        raise GGUFError(f"{path} is not a GGUF file")
    version = struct.unpack_from("<I", data, 4)[0]
    if version < 2:
        raise GGUFError(f"{path}: GGUF version {version} is too old")
    count = struct.unpack_from("<Q", data, 16)[0]
    pos = 24
    found: dict[str, Any] = {}

    def string(at: int) -> tuple[str, int]:
        n = struct.unpack_from("<Q", data, at)[0]
        start = at + 8
        return data[start:start + n].decode("utf-8", "replace"), start + n

    def value(kind: int, at: int, keep: bool) -> tuple[Any, int]:
        if kind == _STRING:
            return string(at)
        if kind == _ARRAY:
            item, n = struct.unpack_from("<IQ", data, at)
            at += 12
            items: list[Any] = []
            for _ in range(n):
                one, at = value(item, at, keep)
                if keep:
                    items.append(one)
            return items, at
        fmt = _TYPES.get(kind)
        if fmt is None:
            raise GGUFError(f"{path}: unknown metadata type {kind}")
        return struct.unpack_from(fmt, data, at)[0], at + struct.calcsize(fmt)

    try:
        for _ in range(count):
            key, pos = string(pos)
            kind = struct.unpack_from("<I", data, pos)[0]
            keep = key in wanted
            result, pos = value(kind, pos + 4, keep)
            if keep:
                found[key] = result
                if len(found) == len(wanted):
                    break
    except struct.error as exc:
        raise GGUFError(f"{path}: metadata runs past the first {_HEADER_READ >> 20} MB ({exc})") from None
    return found


class ByteLevelBPE:
    """Counts tokens of text with a byte-level BPE merge list (``"a b"`` strings, best first)."""

    def __init__(self, merges: Sequence[str]) -> None:
        self.ranks: dict[tuple[str, str], int] = {}
        for rank, merge in enumerate(merges):
            left, _, right = merge.partition(" ")
            self.ranks.setdefault((left, right), rank)
        self._lock = threading.Lock()
        self.word_tokens = lru_cache(maxsize=65536)(self._word_tokens)

    def _word_tokens(self, word: str) -> int:
        symbols = [_BYTE_CHARS[b] for b in word.encode("utf-8")]
        ranks = self.ranks
        while len(symbols) > 1:
            best, at = None, -1
            for i in range(len(symbols) - 1):
                rank = ranks.get((symbols[i], symbols[i + 1]))
                if rank is not None and (best is None or rank < best):
                    best, at = rank, i
            if best is None:
                break
            first, second = symbols[at], symbols[at + 1]
            merged: list[str] = []
            i = 0
            while i < len(symbols):  # every occurrence of the best pair merges at once
                if i < len(symbols) - 1 and symbols[i] == first and symbols[i + 1] == second:
                    merged.append(first + second)
                    i += 2
                else:
                    merged.append(symbols[i])
                    i += 1
            symbols = merged
        return len(symbols)

    def count(self, text: str) -> int:
        """How many tokens ``text`` is."""
        return sum(self.word_tokens(piece) for piece in _SPLIT.findall(text))


_cache: dict[tuple[str, int, int], ByteLevelBPE | None] = {}
_cache_lock = threading.Lock()


def tokenizer_for(path: str | Path) -> ByteLevelBPE | None:
    """The tokenizer of a GGUF file (read once per file), or ``None`` when it is not a byte-level
    BPE moot can count with (then budgets keep their estimate)."""
    p = Path(path)
    try:
        st = p.stat()
    except OSError:
        return None
    key = (str(p), st.st_size, st.st_mtime_ns)
    with _cache_lock:
        if key in _cache:
            return _cache[key]
        try:
            meta = read_metadata(p)
        except (OSError, GGUFError):
            meta = {}
        merges = meta.get("tokenizer.ggml.merges")
        usable = meta.get("tokenizer.ggml.model") == "gpt2" and meta.get("tokenizer.ggml.pre") in ("qwen2", None) and merges
        _cache[key] = ByteLevelBPE(merges) if usable else None
        return _cache[key]


def count_chat_tokens(tokenizer: ByteLevelBPE, messages: Sequence[dict[str, Any]],
                      tools: Sequence[dict[str, Any]] = ()) -> int:
    """The prompt tokens of a chat request as the ChatML template lays it out."""
    total = REPLY_HEADER
    system_seen = bool(messages) and messages[0].get("role") == "system"
    if not system_seen:
        total += tokenizer.count(DEFAULT_SYSTEM) + MESSAGE_OVERHEAD
    if tools:
        total += tokenizer.count(TOOLS_PREAMBLE)
        total += sum(tokenizer.count(json.dumps(t, ensure_ascii=False)) + 1 for t in tools)
    for message in messages:
        content = message.get("content") or ""
        total += tokenizer.count(content if isinstance(content, str) else json.dumps(content)) + MESSAGE_OVERHEAD
        for call in message.get("tool_calls") or ():
            total += tokenizer.count(json.dumps(call.get("function", call), ensure_ascii=False)) + 4
    return total


__all__ = ["ByteLevelBPE", "GGUFError", "count_chat_tokens", "read_metadata", "tokenizer_for"]
