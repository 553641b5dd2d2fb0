"""Research eval scoring on fixed answers, against the real installed httpx package."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from moot.eval.research import ResearchAnswer, load_set, render_table, run_research_eval, score_answer


@pytest.fixture(scope="module")
def qset():  # type: ignore[no-untyped-def]
    return load_set()


def question(qset, qid: str):  # type: ignore[no-untyped-def]
    return next(q for q in qset.questions if q.id == qid)


GOOD_REDIRECTS = (
    "Redirects are only followed when `follow_redirects=True` (it defaults to False, httpx/_client.py:197). "
    "The loop in `_send_handling_redirects` (_client.py:964) checks `has_redirect_location` and raises "
    "TooManyRedirects once `max_redirects` (20) is exceeded. `_redirect_method` (_client.py:494) turns a 303 See Other "
    "and a 302 into GET. `_redirect_headers` (_client.py:546) strips the Authorization header when the redirect "
    "goes to another origin and updates the Host header."
)
WRONG_REDIRECTS = (
    "httpx follows redirects by default. A 303 keeps the POST method unchanged. See httpx/redirects.py:12 "
    "and _client.py:99999."
)


def test_the_set_has_six_questions_with_ground_truth(qset) -> None:  # type: ignore[no-untyped-def]
    assert len(qset.questions) >= 6
    for q in qset.questions:
        assert len(q.subsystems) >= 3 and len(q.claims) >= 3 and len(q.anti_claims) >= 1
    assert (qset.repo() / "_client.py").is_file()  # httpx as installed from PyPI


def test_good_answer_scores_high(qset) -> None:  # type: ignore[no-untyped-def]
    s = score_answer(question(qset, "redirects"), ResearchAnswer(GOOD_REDIRECTS), qset.repo())
    assert s.coverage == 1.0 and s.claim_recall == 1.0 and s.anti_claim_avoidance == 1.0
    assert s.citations == 4 and s.citation_precision == 1.0
    assert s.overall == 1.0


def test_anti_claim_answer_scores_low(qset) -> None:  # type: ignore[no-untyped-def]
    s = score_answer(question(qset, "redirects"), ResearchAnswer(WRONG_REDIRECTS), qset.repo())
    assert s.anti_claim_avoidance == 0.0 and len(s.anti_claims_made) == 2
    assert s.citation_precision == 0.0  # one invented file, one line past the end
    assert s.overall < 0.3


def test_citation_in_an_irrelevant_file_is_not_precise(qset) -> None:  # type: ignore[no-untyped-def]
    s = score_answer(question(qset, "timeouts"), ResearchAnswer("The default is 5 seconds (_decoders.py:10)."), qset.repo())
    assert s.citations == 1 and s.citation_precision == 0.0 and "The default timeout is 5 seconds." in s.claims_made


def test_runner_scores_an_agent_per_mode(qset) -> None:  # type: ignore[no-untyped-def]
    class Fixed:
        async def answer(self, question: str, repo: Path, *, mode: str) -> ResearchAnswer:
            return ResearchAnswer(GOOD_REDIRECTS if mode == "multi" else "I am not sure.", mode=mode)

    seen: list[dict] = []
    result = asyncio.run(run_research_eval(Fixed(), modes=["single", "multi"], only=["redirects"],
                                           on_answer=lambda record, so_far: seen.append(so_far)))
    assert result["complete"] and result["summary"]["multi"]["overall"] == 1.0
    # After the first answer the partial result already holds it (what an interrupted run keeps).
    assert [len(s["records"]) for s in seen] == [1, 2] and not seen[0]["complete"]
    assert seen[0]["summary"]["single"]["answers"] == 1 and seen[0]["summary"]["multi"] == {}
    assert result["summary"]["single"]["coverage"] == 0.0 and result["summary"]["single"]["citation_precision"] is None


def test_runner_counts_answers_with_a_verified_statement(qset) -> None:  # type: ignore[no-untyped-def]
    class Counted:
        async def answer(self, question: str, repo: Path, *, mode: str) -> ResearchAnswer:
            return ResearchAnswer("x", mode=mode, verified={"single": 0, "multi": 3}.get(mode))

    result = asyncio.run(run_research_eval(Counted(), modes=["single", "multi", "baseline"], only=["redirects", "auth"]))
    summary = result["summary"]
    assert summary["multi"]["answers_with_verified"] == 2 and summary["single"]["answers_with_verified"] == 0
    assert summary["baseline"]["answers_with_verified"] is None  # the agent did not say
    assert [r["verified_statements"] for r in result["records"] if r["mode"] == "multi"] == [3, 3]
    table = render_table(result)
    assert "| 2/2 |" in table and "| 0/2 |" in table and "| — |" in table


def test_eval_research_cli_with_a_loopback_model(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    from test_research_support import fake_openai_server

    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), "MOOT_RUNS_DB": str(tmp_path / "runs.sqlite3")}
    env.pop("MOOT_MODEL", None)
    with fake_openai_server() as model:
        out = subprocess.run([sys.executable, "-m", "moot", "eval", "research", "--mode", "both", "--questions", "redirects",
                              "--model", model, "--out", str(tmp_path / "r.json"), "--json"],
                             capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])["summary"]
    assert summary["single"]["answers"] == 1 and summary["multi"]["answers"] == 1
    records = json.loads((tmp_path / "r.json").read_text())["records"]
    assert {r["answered_mode"] for r in records} == {"single", "multi"} and all(r["run_id"] for r in records)
    # the eval is one run in the history, holding each answer's run
    from moot.runtime import RunStore

    store = RunStore(tmp_path / "runs.sqlite3")
    [parent] = store.list_runs(top_level=True)
    assert parent.name == "eval research (httpx, both)" and parent.status == "completed"
    assert sorted(r.id for r in store.children(parent.id)) == sorted(r["run_id"] for r in records)
    assert parent.usage.requests == sum(r["usage"]["requests"] for r in records)
    bad = subprocess.run([sys.executable, "-m", "moot", "eval", "research", "--questions", "nope"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2 and "unknown question id" in bad.stderr


def test_cited_line_ranges_count_as_citations(qset) -> None:  # type: ignore[no-untyped-def]
    answer = ResearchAnswer("Redirects: `_redirect_method`.", citations=["_client.py:494-515", "_client.py:99990-99999"])
    s = score_answer(question(qset, "redirects"), answer, qset.repo())
    assert s.citations == 2 and s.valid_citations == 1 and s.citation_precision == 0.5


# ------------------------------------------------------------------ the second repository: click

GOOD_PROMPT = (
    "`prompt` (termui.py:168) reads the value with `getpass` when hide_input is set (hidden_prompt_func, termui.py:80). "
    "With confirmation_prompt it asks a second time and prints 'The two entered values do not match' when they differ. "
    "The input goes through value_proc (convert_type); a UsageError prints the error and the loop asks again. "
    "An empty answer takes the default."
)


def test_the_click_set_is_scored_against_the_installed_click() -> None:
    clicks = load_set(name="click")
    assert clicks.package == "click" and (clicks.repo() / "core.py").is_file()
    assert len(clicks.questions) >= 6
    for q in clicks.questions:
        assert len(q.subsystems) >= 3 and len(q.claims) >= 3 and len(q.anti_claims) >= 1
    prompt_q = next(q for q in clicks.questions if q.id == "prompt")
    good = score_answer(prompt_q, ResearchAnswer(text=GOOD_PROMPT), clicks.repo())
    assert good.claim_recall == 1.0 and good.citation_precision == 1.0 and good.anti_claim_avoidance == 1.0
    wrong = score_answer(prompt_q, ResearchAnswer(text="Hidden input is shown as asterisks (termui.py:99999)."), clicks.repo())
    assert wrong.claim_recall == 0.0 and wrong.anti_claim_avoidance == 0.0 and wrong.citation_precision == 0.0


def test_an_unknown_question_set_names_the_known_ones() -> None:
    from moot.errors import MootError

    with pytest.raises(MootError) as info:
        load_set(name="requests")
    assert "httpx, click" in info.value.one_line()


def test_eval_research_all_modes_on_click_with_a_loopback_model(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    from test_research_support import fake_openai_server

    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home")}
    env.pop("MOOT_MODEL", None)
    with fake_openai_server() as model:
        out = subprocess.run([sys.executable, "-m", "moot", "eval", "research", "--set", "click", "--mode", "all",
                              "--questions", "prompt", "--model", model, "--out", str(tmp_path / "r.json"), "--json"],
                             capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["package"] == "click" and result["installed_version"] == result["version"]
    assert [r["answered_mode"] for r in result["records"]] == ["baseline", "single", "multi"]
    baseline = result["records"][0]
    assert baseline["usage"]["requests"] == 1  # the one-call baseline really is one call


def test_eval_research_runs_an_npm_set_from_a_folder_the_user_names(tmp_path: Path) -> None:
    """A set written for an npm package (``ecosystem: npm``, as the blind set's writer put it)
    runs on the package's folder named with --repo; without it and with --no-install the
    command says how to get the package, in one line."""
    import json
    import os
    import subprocess
    import sys

    from test_research_support import fake_openai_server

    package = tmp_path / "node_modules" / "tinyqs"
    (package / "lib").mkdir(parents=True)
    (package / "lib" / "parse.js").write_text(
        "function parseKey(key, options) {\n"
        "  if (key.length > options.depth) {\n"
        "    throw new RangeError('too deep');\n"
        "  }\n"
        "  return key.split('.');\n"
        "}\n"
        "module.exports = parseKey;\n")
    question_set = {"package": "tinyqs", "version": "1.0.0", "ecosystem": "npm", "questions": [{
        "id": "depth", "question": "How does parseKey decide that a key is too deep?", "relevant_paths": ["lib/parse.js"],
        "subsystems": [{"name": "parseKey", "any": ["parsekey"]}],
        "claims": [{"text": "A key longer than options.depth raises RangeError.", "all": [["rangeerror"]]}]},
        {"id": "split", "question": "What does parseKey split a key on?", "relevant_paths": ["lib/parse.js"],
         "claims": [{"text": "It splits on dots.", "all": [["split"]]}]}]}
    set_file = tmp_path / "tinyqs.json"
    set_file.write_text(json.dumps(question_set))
    env = {**os.environ, "MOOT_HOME": str(tmp_path / "home"), "MOOT_RUNS_DB": str(tmp_path / "runs.sqlite3")}
    env.pop("MOOT_MODEL", None)
    command = [sys.executable, "-m", "moot", "eval", "research", "--suite", str(set_file), "--mode", "single"]
    with fake_openai_server() as model:
        out = subprocess.run([*command, "--repo", str(package), "--model", model, "--out", str(tmp_path / "r.json"), "--json",
                              "--questions", "depth"], capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["packages"]["tinyqs"]["repo"] == str(package)
    assert result["packages"]["tinyqs"]["installed_version"] == "1.0.0"
    [record] = result["records"]
    assert record["package"] == "tinyqs" and record["question_id"] == "depth" and record["mode"] == "single"
    # --line-choice ranking quotes the top of moot's ranking: the run has no line-picker step
    with fake_openai_server() as model:
        ranked = subprocess.run([*command, "--repo", str(package), "--model", model, "--out", str(tmp_path / "k.json"),
                                 "--questions", "depth", "--line-choice", "ranking"], capture_output=True, text=True, env=env,
                                timeout=300)
    assert ranked.returncode == 0, ranked.stderr
    [by_ranking] = json.loads((tmp_path / "k.json").read_text())["records"]

    def agents(run_id: str) -> str:
        shown = subprocess.run([sys.executable, "-m", "moot", "runs", "show", run_id, "--json"], capture_output=True,
                               text=True, env=env, timeout=60)
        assert shown.returncode == 0, shown.stderr
        return shown.stdout

    assert "line-picker" in agents(record["run_id"]) and "line-picker" not in agents(by_ranking["run_id"])
    wrong = subprocess.run([*command, "--repo", str(package), "--line-choice", "mine"], capture_output=True, text=True,
                           env=env, timeout=60)
    assert wrong.returncode == 2 and "use --line-choice model or --line-choice ranking" in wrong.stderr
    unknown = subprocess.run([*command, "--repo", str(package), "--questions", "depth,nosuch"], capture_output=True,
                             text=True, env=env, timeout=60)
    assert unknown.returncode == 2 and "unknown question id(s): nosuch" in unknown.stderr and "split" in unknown.stderr
    missing = subprocess.run([*command, "--no-install"], capture_output=True, text=True, env=env, timeout=60)
    assert missing.returncode == 2 and "tinyqs@1.0.0 from npm is not installed" in missing.stderr
    errors = [x for x in missing.stderr.splitlines() if x.strip() and not re.match(r"\[\d\d:\d\d:\d\d\] ", x)]
    assert "Traceback" not in missing.stderr and len(errors) == 1  # one error line beside the timestamped progress
    (tmp_path / "suite").mkdir()
    for name in ("tinyqs", "other"):
        (tmp_path / "suite" / f"{name}.json").write_text(json.dumps({**question_set, "package": name}))
    two = subprocess.run([*command[:-4], "--suite", str(tmp_path / "suite"), "--repo", str(package)], capture_output=True,
                         text=True, env=env, timeout=60)
    assert two.returncode == 2 and "--repo names the folder of one package" in two.stderr
