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
    conditions: list[str] | None = None
    """The deciding conditions the answer states, each as it stands in the answer (in words,
    beside the quoted line); ``None`` when the agent does not say."""


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
    kind: str = ""
    """What the question asks, when the set says: ``where``, ``who-calls``, ``how``,
    ``how-decides``, ``what-happens-when``, … (a how-question's answer should state a deciding
    condition)."""

    def asks_how(self) -> bool:
        """Whether the set marks it as a question about how the code decides or behaves
        (``what-happens-when`` and ``what happens`` are the same kind)."""
        return self.kind.strip().lower().replace(" ", "-").startswith(("how", "what-happens", "why", "when"))


@dataclass(frozen=True)
class ResearchSet:
    package: str
    version: str
    questions: list[ResearchQuestion]
    registry: str = ""
    """``pypi`` or ``npm``: the eval installs the pinned version from there (``moot.eval.packages``);
    ``""`` for the bundled sets, read from the environment moot runs in."""
    import_name: str = ""
    """The name a Python package is imported by, when it is not its registry name."""
    root: str = ""
    """The folder inside the package to index (``src``, ``lib``, ``dist``), when not its top."""
    source: str = ""
    """The file the set was read from."""
    local: str = ""
    """A folder that already holds the package at its version (``moot eval research --repo``):
    read there instead of installed, e.g. an npm package's ``node_modules/<name>``."""

    def installed_version(self) -> str | None:
        """The version of the package that is installed (the questions name the one they were written for)."""
        from importlib import metadata

        if self.registry or self.local:  # installed at the pinned version by the eval, or named by the user
            return self.version
        try:
            return metadata.version(self.package)
        except metadata.PackageNotFoundError:
            return None

    def repo(self, *, install: bool = True) -> Path:
        """The package's folder: a set with a ``registry`` is installed at its pinned version into
        moot's cache (once); a bundled set is located with importlib, never downloaded; a
        ``local`` folder is read as it is."""
        if self.local:
            folder = Path(self.local).expanduser()
            if not folder.is_dir():
                raise MootError(f"{folder} is not a folder", fix=f"pass the folder of {self.package} {self.version} to --repo")
            return (folder / self.root) if self.root else folder
        if self.registry:
            from moot.eval.packages import package_source

            return package_source(self.registry, self.package, self.version, import_name=self.import_name,
                                  subdir=self.root, install=install)
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
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        questions = [ResearchQuestion(q["id"], q["question"], q.get("subsystems", []), q.get("claims", []),
                                      q.get("anti_claims", []), q.get("relevant_paths", []), q.get("kind", ""))
                     for q in data["questions"]]
        return ResearchSet(data["package"], str(data["version"]), questions, registry=_registry(data),
                           import_name=data.get("import", ""), root=data.get("root", ""), source=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise MootError(f"cannot read the question set {path}: {exc}", fix="pass a readable JSON file") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        what = f"missing {exc}" if isinstance(exc, KeyError) else str(exc)
        raise MootError(f"{path} is not a research question set ({what})",
                        fix="see docs/eval.md for the format: package, version, registry, questions[id, question, claims, …]") from None


def _registry(data: dict[str, Any]) -> str:
    """The registry a set's package comes from: ``registry``, or ``ecosystem`` as the blind set's
    writer named it (``pypi``, ``npm``; case and a ``PyPI``-style spelling accepted)."""
    return str(data.get("registry") or data.get("ecosystem") or "").strip().lower()


def load_suite(path: Path) -> list[ResearchSet]:
    """The question sets of a suite: one JSON file, or every ``*.json`` in a folder that has
    ``questions`` (a README or other files beside them are left alone)."""
    if path.is_file():
        return [load_set(path)]
    if not path.is_dir():
        raise MootError(f"{path} is not a question set or a folder of them", fix="pass a suite folder or a .json file")
    sets = []
    for file in sorted(path.glob("*.json")):
        try:
            has_questions = "questions" in json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            has_questions = False
        if has_questions:
            sets.append(load_set(file))
    if not sets:
        raise MootError(f"{path} holds no question set", fix="put one .json file per package in it (see docs/eval.md)")
    return sets


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


def condition_scores(question: ResearchQuestion, answer: ResearchAnswer) -> dict[str, Any]:
    """For an answer that reports its stated conditions: how many, and whether they alone make
    one of the question's claims (a stated condition that is right about what decides)."""
    if answer.conditions is None:
        return {}
    text = "\n".join(answer.conditions).lower()
    made = [c["text"] for c in question.claims if text and all(_any(group, text) for group in c["all"])]
    return {"conditions_stated": len(answer.conditions), "condition_claims": made}


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
            record = {"question_id": q.id, "package": qset.package, "kind": q.kind, "asks_how": q.asks_how(),
                      "mode": mode, "answered_mode": reply.mode, "answer": reply.text,
                      "run_id": reply.run_id, "seconds": round(seconds, 2), "usage": reply.usage.model_dump(),
                      "verified_statements": reply.verified, **condition_scores(q, reply),
                      **score.to_dict()}
            if judge is not None:
                expected = " ".join(c["text"] for c in q.claims)
                verdict = await judge.grade(q.question, expected, reply.text)
                record["judge"] = verdict.model_dump()
            records.append(record)
            if on_answer is not None:
                on_answer(record, _result(qset, repo, modes, records, complete=False))
    return _result(qset, repo, modes, records, complete=True)


async def run_research_suite(agent: ResearchAgent, *, modes: list[str], sets: list[ResearchSet], judge: Any = None,
                             on_answer: Any = None, name: str = "") -> dict[str, Any]:
    """Every set of a suite (one package each), then one summary per mode over all their
    answers; ``on_answer`` gets the whole suite's results so far."""
    done: dict[str, dict[str, Any]] = {}

    def combined(complete: bool) -> dict[str, Any]:
        records = [r for result in done.values() for r in result["records"]]
        return {"suite": name, "modes": modes, "complete": complete,
                "packages": {pkg: {k: v for k, v in result.items() if k != "records"} for pkg, result in done.items()},
                "summary": {mode: _summary([r for r in records if r["mode"] == mode]) for mode in modes},
                "records": records}

    for qset in sets:
        def progress(record: dict[str, Any], so_far: dict[str, Any], package: str = qset.package) -> None:
            done[package] = so_far
            if on_answer is not None:
                on_answer(record, combined(False))

        done[qset.package] = await run_research_eval(agent, modes=modes, questions=qset, judge=judge, on_answer=progress)
    return combined(True)


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
    how = [r for r in records if r.get("asks_how") and "conditions_stated" in r]
    if how:  # "every how-question's answer states a deciding condition that is right and quoted"
        out["how_questions"] = len(how)
        out["how_with_condition"] = sum(1 for r in how if r["conditions_stated"] > 0)
        out["how_with_right_condition"] = sum(1 for r in how if r["condition_claims"])
    if any("judge" in r for r in records):
        out["judge_score"] = round(statistics.median(r["judge"]["score"] for r in records if "judge" in r), 3)
    return out


def render_table(result: dict[str, Any]) -> str:
    """A markdown table of the per-mode summary (a suite's: over all its packages)."""
    how = any(s.get("how_questions") for s in result["summary"].values() if s)
    rows = ["| mode | answers | coverage | claim recall | citation precision | anti-claim avoidance | overall | s/question | "
            "calls/question | answers with a verified statement |" + (" how-questions: a condition stated / right |" if how else ""),
            "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if how else "")]
    for mode, s in result["summary"].items():
        if s:
            verified = "—" if s.get("answers_with_verified") is None else f"{s['answers_with_verified']}/{s['answers']}"
            row = (f"| {mode} | {s['answers']} | {s['coverage']} | {s['claim_recall']} | {s['citation_precision']} | "
                   f"{s['anti_claim_avoidance']} | {s['overall']} | {s['seconds']} | {s['calls_per_question']} | {verified} |")
            if how:
                row += (f" {s['how_with_condition']}/{s['how_questions']} / {s['how_with_right_condition']}/{s['how_questions']} |"
                        if s.get("how_questions") else " — |")
            rows.append(row)
    return "\n".join(rows)
