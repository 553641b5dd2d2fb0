"""Phase 4, the verifier: every claim of the answer checked against the code.

Three checks, cheapest first:

1. **Names, mechanically** (no model): a claim naming code — a backticked name or a
   ``snake_case`` one — that occurs nowhere in the indexed repository, or naming one of
   moot's own research tools as if it were code, is CORRECTED: the clauses that name it are
   removed and the rest of the statement is kept when it still says something about real
   code; only a statement with nothing else left is removed whole. The 0.5B model echoes its
   own tool descriptions ("decoding is done by the `read_map` function") and invents classes
   (`httpx.Decoder`); no verdict of the model could fix that. File names (`caller_file.py`,
   `config.json`) are not code names: they are checked against the indexed files, and a claim
   that puts a symbol "in" a file that does not define it is CORRECTED to the file that does.
2. **Citations, mechanically** (no model): a claim citing ``path:line`` that is not an indexed
   file, or a line past its end, is CORRECTED — the citation is moved to where the symbol the
   claim names is really defined, or removed when there is no such place. A claim naming a
   symbol that is not in the cited lines but is defined elsewhere is CORRECTED the same way.
3. **The verifier agent** (the model, with the code tools) judges the remaining claims against
   the cited code it is shown: VERIFIED, CORRECTED (with a correction) or UNVERIFIABLE. Only a
   CORRECTED verdict with a correction changes the answer: the claim is replaced by it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from moot.codeindex import CodeIndex
from moot.models.base import ModelSettings
from moot.runtime import SubAgent, load_prompt
from moot.teams.research.citations import Citation, exists, file_lines, find_citations
from moot.teams.research.models import VerificationResult

MAX_MODEL_CLAIMS = 5
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*-])|\n+")
_IDENT = re.compile(r"`([A-Za-z_][\w.]*)(?:\(\))?`|\b([a-z]+_[a-z0-9_]+|[A-Z][a-z0-9]+[A-Z]\w*)\b")
_EXTENSIONS = ("py|pyi|pyx|js|jsx|mjs|cjs|ts|tsx|md|rst|txt|json|toml|yaml|yml|cfg|ini|sh|c|h|cc|cpp|hpp|go|rs|"
               "java|kt|rb|php|html|css|sql|lock")
_FILE = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:{_EXTENSIONS}))(?![\w/-])")
"""A file name or relative path: ``caller_file.py``, ``src/app/config.json``. Its stem and its
extension are not code names (the old check took the ``py`` of ``caller_file.py`` for one)."""
_TECH_NAME = re.compile(r"[A-Z][a-z]+\.js")
TOOL_NAMES = frozenset({"search_code", "resolve_symbol", "read_file", "read_map"})
"""moot's research tools: a statement that names one talks about moot, not the repository."""
_CLAUSE_BREAK = re.compile(r",\s+(?:and|but|which|while|where|so|then)\s+|;\s+|,\s+|\s+(?:and|but|while|whereas)\s+"
                           r"(?=(?:it|then|also|calls?|returns?|is|are|uses?|passes|sets?|raises?|sends?|reads?|writes?|`)\b|`)")
_IN_FILE = re.compile(rf"`?([A-Za-z_][\w.]*)`?(?:\(\))?\s+(?:is\s+|are\s+)?(?:defined\s+|declared\s+|implemented\s+|located\s+)?"
                      rf"(?:in|inside|from|within)\s+(?:the\s+(?:file|module)\s+)?`?((?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS}))`?")


@dataclass
class Claim:
    text: str
    citations: list[Citation]

    def names(self, *, code_only: bool = False) -> list[str]:
        """The code names the claim mentions; ``code_only`` leaves out unquoted CamelCase words,
        which prose has too ("JavaScript", "GitHub"). File names are not code names."""
        out = []
        for m in _IDENT.finditer(_FILE.sub(" ", _strip_citations(self.text))):
            if code_only and not (m.group(1) or "_" in m.group(2)):
                continue
            name = (m.group(1) or m.group(2)).rsplit(".", 1)[-1]
            if name and name not in out:
                out.append(name)
        return out


    def files(self) -> list[str]:
        """The file names and paths the claim mentions outside its ``path:line`` citations
        (not prose names of technologies such as "Node.js" or "Vue.js")."""
        found = (m.group(1) for m in _FILE.finditer(_strip_citations(self.text)))
        return list(dict.fromkeys(f for f in found if not _TECH_NAME.fullmatch(f)))


def unknown_names(index: CodeIndex, text: str) -> list[str]:
    """The code names in ``text`` (backticked or ``snake_case``) that occur nowhere in the
    repository, and moot's own tool names used in it (never code of the repository)."""
    names = Claim(text, []).names(code_only=True)
    tools = [t for t in TOOL_NAMES if re.search(rf"(?<!\w){t}(?!\w)", text) and not index.mentions(t)]
    return [n for n in names if n not in TOOL_NAMES and not index.mentions(n)] + sorted(tools)


def _names_any(text: str, names: list[str]) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text) for n in names)


def narrow(text: str, bad: list[str]) -> str | None:
    """``text`` without its clauses that name any of ``bad``; ``None`` when what is left no
    longer says anything about code (fewer than three words, or no code name or citation)."""
    pieces = _CLAUSE_BREAK.split(text.strip().rstrip("."))
    kept = [p.strip() for p in pieces if p.strip() and not _names_any(p, bad)]
    if len(kept) == len([p for p in pieces if p.strip()]):
        return text
    result = ", ".join(kept).strip(" ,;")
    if len(result.split()) < 3:
        return None
    probe = Claim(result, find_citations(result))
    if not (probe.citations or probe.names(code_only=True) or probe.files()):
        return None
    return result[0].upper() + result[1:] + "."


def _file_known(index: CodeIndex, name: str, paths: list[str]) -> bool:
    name = name.lstrip("./")
    return any(p == name or p.endswith("/" + name) for p in paths)


def misplaced(index: CodeIndex, text: str) -> list[tuple[str, str, str]]:
    """``(name, file said, file that defines it)`` for each "NAME in FILE" whose NAME is defined
    in the repository but not in that file."""
    out = []
    for m in _IN_FILE.finditer(_strip_citations(text)):
        name, file = m.group(1).rsplit(".", 1)[-1], m.group(2)
        if name in TOOL_NAMES:
            continue
        found = index.resolve_symbol(name)
        if found and not any(s.path == file.lstrip("./") or s.path.endswith("/" + file.lstrip("./")) for s in found):
            out.append((m.group(1), file, found[0].path))
    return out


def _strip_citations(text: str) -> str:
    for c in find_citations(text):
        text = text.replace(c.text, " ")
    return text


def split_claims(answer: str) -> list[Claim]:
    """Sentences and list items that say something checkable (a citation or a code name)."""
    claims = []
    for piece in _SENTENCE.split(answer):
        piece = piece.strip()
        if len(piece) < 8 or piece.startswith("Evidence locations (added by moot"):
            continue
        cites = find_citations(piece)
        claim = Claim(piece, cites)
        if cites or claim.names():
            claims.append(claim)
    return claims


class ClaimVerdict(BaseModel):
    claim: int = Field(description="the claim's number")
    status: Literal["VERIFIED", "CORRECTED", "UNVERIFIABLE"]
    correction: str = Field(default="", description="the right statement, for CORRECTED only")


class VerifierOutput(BaseModel):
    verdicts: list[ClaimVerdict] = Field(default_factory=list, max_length=MAX_MODEL_CLAIMS)


def verifier_agent(model: object, tools: list[object]) -> SubAgent:
    return SubAgent("verifier", "checks each claim of the answer against the code", load_prompt("verifier", __package__),
                    tools=tools, model=model, output_type=VerifierOutput, max_turns=3,  # type: ignore[arg-type]
                    settings=ModelSettings(max_tokens=500))


def _defined_at(index: CodeIndex, names: list[str]) -> str | None:
    for name in names:
        found = index.resolve_symbol(name)
        if found:
            s = found[0]
            return f"{s.path}:{s.start_line}"
    return None


def _check_names(index: CodeIndex, text: str, *, paths_of: Callable[[], list[str]]) -> tuple[str, list[str]]:
    """The statement with its names made right, step by step, and what each step did: clauses
    naming code the repository lacks (or moot's tools) removed, a symbol put "in" the wrong
    file moved to the file that defines it, clauses naming files the repository lacks removed.
    ``""`` when nothing true is left."""
    notes: list[str] = []
    if unknown := unknown_names(index, text):
        what = ", ".join(unknown)
        why = ("is one of moot's research tools, not code in the repository" if set(unknown) <= TOOL_NAMES
               else "is not in the repository")
        narrowed = narrow(text, unknown)
        if narrowed is None:
            return "", [f"{what} {why}: the statement was removed"]
        notes.append(f"{what} {why}: the part naming it was removed")
        text = narrowed
    if wrong := misplaced(index, text):
        for name, said, real in wrong:
            text = text.replace(said, real)
            notes.append(f"{name} is defined in {real}, not in {said}")
    files = Claim(text, []).files()
    if files and (missing := [f for f in files if not _file_known(index, f, paths_of())]):
        narrowed = narrow(text, missing)
        what = ", ".join(missing)
        if narrowed is None:
            return "", [*notes, f"{what} is not a file of the repository: the statement was removed"]
        notes.append(f"{what} is not a file of the repository: the part naming it was removed")
        text = narrowed
    return text, notes


def file_paths_once(index: CodeIndex) -> Callable[[], list[str]]:
    """The index's file paths, read on the first call only (and only when a statement names a file)."""
    paths: list[str] = []

    def paths_of() -> list[str]:
        if not paths:
            paths.extend(index.file_paths())
        return paths

    return paths_of


def check_citations(index: CodeIndex, claims: list[Claim]) -> tuple[list[VerificationResult], dict[str, str], list[Claim]]:
    """Mechanical verdicts, the text replacements they imply, and the claims left for the model."""
    verdicts: list[VerificationResult] = []
    replace: dict[str, str] = {}
    left: list[Claim] = []
    paths_of = file_paths_once(index)
    for claim in claims:
        fixed, notes = _check_names(index, claim.text, paths_of=paths_of)
        if fixed != claim.text:
            replace[claim.text] = fixed
            verdicts.append(VerificationResult(
                claim=claim.text, status="CORRECTED", citation=claim.citations[0].text if claim.citations else "",
                method="name", correction="; ".join(notes),
            ))  # fmt: skip
            continue
        bad = [c for c in claim.citations if not exists(index, c)]
        if bad:
            moved = _defined_at(index, claim.names())
            fixed = claim.text
            for c in bad:
                fixed = fixed.replace(c.text, moved or "").replace("()", "()")
            fixed = re.sub(r"\(\s*\)|`\s*`|\[\s*\]", "", fixed).replace("  ", " ").strip()
            replace[claim.text] = fixed
            what = ", ".join(c.text for c in bad)
            verdicts.append(VerificationResult(
                claim=claim.text, status="CORRECTED", citation=what, method="citation",
                correction=(f"{what} does not exist in the repository; cited {moved} instead" if moved
                            else f"{what} does not exist in the repository; citation removed"),
            ))  # fmt: skip
            continue
        if claim.citations and claim.names():
            names = claim.names()
            shown = "\n".join(_cited_code(index, c, pad=3) for c in claim.citations)
            if not any(n in shown for n in names):
                moved = _defined_at(index, names)
                if moved and all(moved != f"{c.path}:{c.start}" for c in claim.citations):
                    fixed = claim.text
                    for c in claim.citations:
                        fixed = fixed.replace(c.text, moved)
                    replace[claim.text] = fixed
                    verdicts.append(VerificationResult(
                        claim=claim.text, status="CORRECTED", citation=claim.citations[0].text, method="citation",
                        correction=f"{names[0]} is not at {claim.citations[0].text}; it is defined at {moved}",
                    ))  # fmt: skip
                    continue
        left.append(claim)
    return verdicts, replace, left


def _cited_code(index: CodeIndex, c: Citation, pad: int = 0) -> str:
    n = file_lines(index, c.path) or c.end
    start, end = max(1, c.start - pad), min(n, max(c.end, c.start) + pad, c.start + 30)
    try:
        return index.read_file(c.path, start, end)
    except Exception:
        return ""


def model_task(index: CodeIndex, claims: list[Claim]) -> str:
    parts = []
    for n, claim in enumerate(claims, 1):
        code = "\n".join(_cited_code(index, c, pad=2)[:600] for c in claim.citations) or "(no citation: use a tool)"
        parts.append(f"Claim {n}: {claim.text}\nCode:\n{code}")
    return "\n\n".join(parts) + "\n\nGive a verdict for every claim."


def apply_model_verdicts(claims: list[Claim], output: object,
                         index: CodeIndex | None = None) -> tuple[list[VerificationResult], dict[str, str]]:
    """The verifier model's verdicts, and the replacements its corrections imply. With ``index``, a
    correction is held to the same check as the answer's own statements: a part naming code the
    repository lacks, or one of moot's tools, is removed, and a correction with nothing true left is
    refused (the claim stays, unverifiable). On a blind package the 0.5B verifier "corrected" a claim
    into "The function `read_file` is called with …", naming its own tool."""
    verdicts, replace = [], {}
    paths_of = file_paths_once(index) if index is not None else None
    by_number = {v.claim: v for v in output.verdicts} if isinstance(output, VerifierOutput) else {}
    for n, claim in enumerate(claims, 1):
        v = by_number.get(n)
        cite = claim.citations[0].text if claim.citations else ""
        if v is None:
            verdicts.append(VerificationResult(claim=claim.text, status="UNVERIFIABLE", citation=cite, method="model",
                                               correction="the verifier gave no verdict"))
            continue
        correction = v.correction.strip()
        status = v.status if v.status != "CORRECTED" or correction else "UNVERIFIABLE"
        if status == "CORRECTED" and index is not None and paths_of is not None:
            checked, notes = _check_names(index, correction, paths_of=paths_of)
            if not checked:
                status, correction = "UNVERIFIABLE", f"the verifier's correction was refused: {'; '.join(notes)}"
            else:
                correction = checked
        verdicts.append(VerificationResult(claim=claim.text, status=status, correction=correction,  # type: ignore[arg-type]
                                           citation=cite, method="model"))
        if status == "CORRECTED":
            kept = " ".join(c.text for c in claim.citations if c.text not in correction)
            replace[claim.text] = correction + (f" ({kept})" if kept else "")
    return verdicts, replace


NOTHING_KEPT = ("(moot removed every statement of the model's answer: each named code that is not in this "
                "repository or cited a place that does not exist; the verification lists them)")


def revise(answer: str, replace: dict[str, str]) -> str:
    """The answer with the replacements made; a note when nothing of it is left."""
    revised = answer
    for old, new in replace.items():
        revised = revised.replace(old, new)
    return revised if revised.strip() or not answer.strip() else NOTHING_KEPT
