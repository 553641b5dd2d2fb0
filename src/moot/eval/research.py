"""The research eval: questions about a real package, scored by rubric (and optionally a judge).

Data: ``data/research/*.json`` — questions about an installed open-source package (httpx), each
with the subsystems a good answer covers, ground-truth claims and anti-claims. Patterns match
case-insensitively; ``re:`` starts a regular expression; a claim's ``all`` is a list of groups,
each of which must match one of its alternatives.

Scores per answer (all 0–1):

- **coverage**: share of subsystems the answer (its text and cited paths) touches;
- **claim recall**: share of ground-truth claims the answer makes;
- **citation precision**: share of cited ``path:line`` that exist in the package and are in a
  file relevant to the question (``None`` when the answer cites nothing);
- **anti-claim avoidance**: 1 − share of anti-claims the answer makes.

This layer does not import teams: anything implementing :class:`ResearchAgent` is scored
(the CLI wires the research team in).
"""

from __future__ import annotations

import importlib.util
import json
import re
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from moot.errors import MootError
from moot.models.base import Usage

DATA = Path(__file__).parent / "data" / "research"
_CITATION = re.compile(r"(?<![\w/.])((?:[\w.-]+/)*[\w.-]+\.[A-Za-z]{1,5}):(\d+)")


@dataclass
class ResearchAnswer:
    """What the agent under test returns for one question."""

    text: str
    citations: list[str] = field(default_factory=list)
    """``path:line`` locations the answer cites (found in the text when empty)."""
    usage: Usage = field(default_factory=Usage)
    seconds: float | None = None
    run_id: str | None = None
    mode: str = ""
    verified: int | None = None
    """Statements of the answer checked against the code (written from the index, quoted from the
    files, or verified); ``None`` when the agent does not say."""


class ResearchAgent(Protocol):
    """An agent the research eval can score."""

    async def answer(self, question: str, repo: Path, *, mode: str) -> ResearchAnswer:
        ...


@dataclass(frozen=True)
class ResearchQuestion:
    id: str
    question: str
    subsystems: list[dict[str, Any]]
    claims: list[dict[str, Any]]
    anti_claims: list[dict[str, Any]]
    relevant_paths: list[str]


@dataclass(frozen=True)
class ResearchSet:
    package: str
    version: str
    questions: list[ResearchQuestion]

    def installed_version(self) -> str | None:
        """The version of the package that is installed (the questions name the one they were written for)."""
        from importlib import metadata

        try:
            return metadata.version(self.package)
        except metadata.PackageNotFoundError:
            return None

    def repo(self) -> Path:
        """The installed package's folder (located with importlib, never downloaded)."""
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.origin:
            raise MootError(f"the package {self.package!r} is not installed",
                            fix=f"pip install {self.package}=={self.version}")
        return Path(spec.origin).parent


SETS = ("httpx", "click")
"""The bundled question sets, each about an installed package's source."""


def load_set(path: Path | None = None, *, name: str = "httpx") -> ResearchSet:
    if path is None:
        if name not in SETS:
            raise MootError(f"unknown question set {name!r}", fix=f"use one of: {', '.join(SETS)}")
        path = DATA / f"{name}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    questions = [ResearchQuestion(q["id"], q["question"], q["subsystems"], q["claims"], q["anti_claims"],
                                  q.get("relevant_paths", [])) for q in data["questions"]]
    return ResearchSet(data["package"], data["version"], questions)


# --------------------------------------------------------------------------- scoring


def _matches(pattern: str, text: str) -> bool:
    if pattern.startswith("re:"):
        return re.search(pattern[3:], text, re.I | re.S) is not None
    return pattern.lower() in text


def _any(patterns: list[str], text: str) -> bool:
    return any(_matches(p, text) for p in patterns)


def citations_in(text: str) -> list[str]:
    return [f"{m.group(1)}:{m.group(2)}" for m in _CITATION.finditer(text)]


def _line_count(repo: Path, rel: str) -> int | None:
    try:
        target = (repo / rel).resolve()
        if not target.is_relative_to(repo.resolve()) or not target.is_file():
            return None
        return target.read_bytes().count(b"\n") + 1
    except OSError:
        return None


@dataclass
class Score:
    coverage: float
    claim_recall: float
    citation_precision: float | None
    anti_claim_avoidance: float
    covered: list[str]
    claims_made: list[str]
    anti_claims_made: list[str]
    citations: int
    valid_citations: int

    @property
    def overall(self) -> float:
        """Mean of the four scores (precision counts 0 when nothing is cited)."""
        return (self.coverage + self.claim_recall + (self.citation_precision or 0.0) + self.anti_claim_avoidance) / 4

    def to_dict(self) -> dict[str, Any]:
        return {"coverage": round(self.coverage, 3), "claim_recall": round(self.claim_recall, 3),
                "citation_precision": None if self.citation_precision is None else round(self.citation_precision, 3),
                "anti_claim_avoidance": round(self.anti_claim_avoidance, 3), "overall": round(self.overall, 3),
                "covered": self.covered, "claims_made": self.claims_made, "anti_claims_made": self.anti_claims_made,
                "citations": self.citations, "valid_citations": self.valid_citations}


def score_answer(question: ResearchQuestion, answer: ResearchAnswer, repo: Path) -> Score:
    """Rubric scores for one answer against the question's ground truth."""
    text = answer.text.lower()
    cites = answer.citations or citations_in(answer.text)
    searchable = text + "\n" + "\n".join(c.lower() for c in cites)
    covered = [s["name"] for s in question.subsystems if _any(s["any"], searchable)]
    made = [c["text"] for c in question.claims if all(_any(group, text) for group in c["all"])]
    anti = [a["text"] for a in question.anti_claims if _any(a["any"], text)]
    valid = 0
    for cite in cites:
        path, _, line = cite.rpartition(":")
        line = re.split(r"\s*[-–]\s*", line.strip())[0]  # "475-492" cites from line 475
        path = path.removeprefix(f"{repo.name}/")  # "httpx/_client.py" and "_client.py" both name the file
        n = _line_count(repo, path)
        relevant = not question.relevant_paths or any(path.endswith(p) for p in question.relevant_paths)
        if n is not None and line.isdigit() and 1 <= int(line) <= n and relevant:
            valid += 1
    return Score(
        coverage=len(covered) / max(1, len(question.subsystems)),
        claim_recall=len(made) / max(1, len(question.claims)),
        citation_precision=(valid / len(cites)) if cites else None,
        anti_claim_avoidance=1 - len(anti) / max(1, len(question.anti_claims)),
        covered=covered, claims_made=made, anti_claims_made=anti, citations=len(cites), valid_citations=valid,
    )  # fmt: skip


# --------------------------------------------------------------------------- running


async def run_research_eval(agent: ResearchAgent, *, modes: list[str], questions: ResearchSet | None = None,
                            only: list[str] | None = None, judge: Any = None,
                            on_answer: Any = None) -> dict[str, Any]:
    """Ask every question in every mode; score each answer; summarise per mode.

    ``on_answer(record, result_so_far)`` is called after each graded answer, so a caller can
    save partial results (an interrupted run keeps what it graded).
    """
    qset = questions or load_set()
    repo = qset.repo()
    records: list[dict[str, Any]] = []
    for mode in modes:
        for q in qset.questions:
            if only and q.id not in only:
                continue
            started = time.perf_counter()
            reply = await agent.answer(q.question, repo, mode=mode)
            seconds = reply.seconds if reply.seconds is not None else time.perf_counter() - started
            score = score_answer(q, reply, repo)
            record = {"question_id": q.id, "mode": mode, "answered_mode": reply.mode, "answer": reply.text,
                      "run_id": reply.run_id, "seconds": round(seconds, 2), "usage": reply.usage.model_dump(),
                      "verified_statements": reply.verified,
                      **score.to_dict()}
            if judge is not None:
                expected = " ".join(c["text"] for c in q.claims)
                verdict = await judge.grade(q.question, expected, reply.text)
                record["judge"] = verdict.model_dump()
            records.append(record)
            if on_answer is not None:
                on_answer(record, _result(qset, repo, modes, records, complete=False))
    return _result(qset, repo, modes, records, complete=True)


def _result(qset: ResearchSet, repo: Path, modes: list[str], records: list[dict[str, Any]], *,
            complete: bool) -> dict[str, Any]:
    """The results document; ``complete`` is false while questions are still to be asked."""
    summary = {mode: _summary([r for r in records if r["mode"] == mode]) for mode in modes}
    return {"package": qset.package, "version": qset.version, "installed_version": qset.installed_version(),
            "repo": str(repo), "modes": modes,
            "complete": complete, "summary": summary, "records": list(records)}


def _summary(records: list[dict[str, Any]]) -> dict[str, Any]:
    if not records:
        return {}

    def mean(key: str) -> float | None:
        values = [r[key] for r in records if r.get(key) is not None]
        return round(statistics.fmean(values), 3) if values else None

    out = {key: mean(key) for key in ("coverage", "claim_recall", "citation_precision", "anti_claim_avoidance",
                                      "overall", "seconds")}
    out["answers"] = len(records)
    counted = [r["verified_statements"] for r in records if r.get("verified_statements") is not None]
    # "every question answered with at least one verified statement" is a goal: count it
    out["answers_with_verified"] = sum(1 for n in counted if n > 0) if counted else None
    out["calls_per_question"] = round(statistics.fmean(r["usage"]["requests"] for r in records), 2)
    out["tokens_per_question"] = round(statistics.fmean(r["usage"]["input_tokens"] + r["usage"]["output_tokens"]
                                                        for r in records), 1)
    if any("judge" in r for r in records):
        out["judge_score"] = round(statistics.median(r["judge"]["score"] for r in records if "judge" in r), 3)
    return out


def render_table(result: dict[str, Any]) -> str:
    """A markdown table of the per-mode summary."""
    rows = ["| mode | answers | coverage | claim recall | citation precision | anti-claim avoidance | overall | s/question | calls/question | answers with a verified statement |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for mode, s in result["summary"].items():
        if s:
            verified = "—" if s.get("answers_with_verified") is None else f"{s['answers_with_verified']}/{s['answers']}"
            rows.append(f"| {mode} | {s['answers']} | {s['coverage']} | {s['claim_recall']} | {s['citation_precision']} | "
                        f"{s['anti_claim_avoidance']} | {s['overall']} | {s['seconds']} | {s['calls_per_question']} | {verified} |")
    return "\n".join(rows)
