"""The shared engine on the real embedded model: one engine process for many moot processes,
and the faults a machine really has (a killed engine, a simultaneous start, new weights).

Each test gets its own engine directory, so it starts (and ends) an engine of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from moot.models import engine_client
from moot.models.base import ModelRequest, ModelSettings, TextDelta, UserMessage
from moot.models.engine import engine_loads
from moot.models.engine_client import EngineGone
from moot.models.local import load_local
from moot.models.weights import DEFAULT_VARIANT, ensure_weights

pytestmark = pytest.mark.embedded

CHILD = """
import asyncio, json, sys
from moot.models.base import ModelRequest, ModelSettings, UserMessage
from moot.models.engine import engine_loads
from moot.models.local import load_local

async def main():
    model = load_local(sys.argv[1])
    reply = await model.request(ModelRequest(messages=(UserMessage(content=sys.argv[2]),),
                                             settings=ModelSettings(max_tokens=8)))
    print(json.dumps({"text": reply.text, "loads": engine_loads(model.path)}))

asyncio.run(main())
"""


@pytest.fixture
def engine_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="me-"))
    monkeypatch.setenv("MOOT_ENGINE_DIR", str(directory))
    monkeypatch.delenv("MOOT_LOCAL_ENGINE", raising=False)
    yield directory
    for sock in directory.glob("*.sock"):
        engine_client.stop(engine_client.EnginePaths(directory, sock.stem))
    shutil.rmtree(directory, ignore_errors=True)


def engine_pids(directory: Path) -> set[int]:
    """Live engine processes serving from ``directory`` (read from /proc, as ps would)."""
    found = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().split(") ")[-1][:1]
        except OSError:
            continue
        if b"moot.models.engine_server" in argv and any(str(directory).encode() in a for a in argv) and state != "Z":
            found.add(int(proc.name))
    return found


def maps_weights(pid: int, weights: Path) -> bool:
    """Whether a process has the weight file mapped into memory, i.e. loaded it itself."""
    try:
        return str(weights) in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return False


def child(spec: str, prompt: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", CHILD, spec, prompt], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_starting_at_the_same_instant_share_one_engine(engine_home: Path) -> None:
    children = [child("local", "What is 2+3? Answer with just the number."), child("local", "Name a colour.")]
    outputs = [c.communicate(timeout=600) for c in children]
    for c, (out, err) in zip(children, outputs):
        assert c.returncode == 0, err
    replies = [json.loads(out.strip().splitlines()[-1]) for out, _ in outputs]
    assert replies[0]["text"].strip() == "5" and replies[1]["text"].strip()
    assert [r["loads"] for r in replies] == [0, 0]  # neither process loaded the weights itself
    assert len(engine_pids(engine_home)) == 1


async def test_an_engine_killed_mid_answer_gives_a_clear_error_and_the_next_request_starts_a_new_one(
    engine_home: Path, allow_real: None
) -> None:
    model = load_local("local")
    request = ModelRequest(
        messages=(UserMessage(content="Count from 1 to 200, one number per line."),), settings=ModelSettings(max_tokens=400)
    )
    with pytest.raises(EngineGone) as info:
        async for event in model.stream(request):
            if isinstance(event, TextDelta):
                [pid] = engine_pids(engine_home)
                os.kill(pid, signal.SIGKILL)
    assert "stopped in the middle of a request" in info.value.one_line() and info.value.retryable

    reply = await model.request(
        ModelRequest(messages=(UserMessage(content="What is 2+3? Answer with just the number."),), settings=ModelSettings(max_tokens=8))
    )
    assert reply.text.strip() == "5"
    [new_pid] = engine_pids(engine_home)
    assert new_pid != pid and engine_loads(model.path or "") == 0


def test_an_engine_is_replaced_when_its_weight_file_is_replaced(engine_home: Path) -> None:
    source = ensure_weights(DEFAULT_VARIANT)
    copy = engine_home.parent / f"{engine_home.name}.gguf"
    shutil.copyfile(source, copy)
    try:
        first = child(f"local:{copy}", "Name a colour.")
        assert first.communicate(timeout=600) and first.returncode == 0
        [old] = engine_pids(engine_home)
        staged = copy.with_suffix(".new")
        shutil.copyfile(source, staged)
        os.replace(staged, copy)  # what an update does: a new file under the old name
        second = child(f"local:{copy}", "Name a fruit.")
        out, err = second.communicate(timeout=600)
        assert second.returncode == 0, err
        [new] = engine_pids(engine_home)
        assert new != old
        info = engine_client.status(engine_client.EnginePaths.for_model(copy))
        assert info is not None and info["weights"]["inode"] == copy.stat().st_ino
    finally:
        copy.unlink(missing_ok=True)


NOTES = """# Harbour notes

The Kessel harbour crane lifts at most 40 tonnes.
The harbour opened in 1911.
"""


def moot(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.Popen([sys.executable, "-m", "moot", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def test_four_board_workers_and_an_ask_share_one_engine(engine_home: Path, tmp_path: Path) -> None:
    weights = ensure_weights(DEFAULT_VARIANT)
    notes = tmp_path / "harbour.md"
    notes.write_text(NOTES)
    learn = moot("learn", str(notes), "--kb", "harbour")
    _out, err = learn.communicate(timeout=900)
    assert learn.returncode == 0, err

    ws = tmp_path / "ws"
    assert moot("board", "init", str(ws)).wait(60) == 0
    (ws / "context" / "harbour.md").write_text(NOTES)
    for n, question in enumerate(["How much can the crane lift?", "When did the harbour open?",
                                  "What is the crane's limit in tonnes?", "In which year did the harbour open?"]):
        assert moot("board", "submit", str(ws), question, "--requires", "document_search", "--id", f"q{n}").wait(60) == 0

    workers = [
        moot("board", "worker", str(ws), "--agent", "search", "--model", "local", "--until-idle", "--idle-grace", "3",
             "--lease", "300", "--json")
        for _ in range(4)
    ]
    ask = moot("ask", "How many tonnes can the Kessel harbour crane lift?", "--kb", "harbour", "--json")
    everyone = [*workers, ask]
    engines_seen: set[int] = set()
    clients_seen: set[int] = set()
    loaded_by_a_client = False
    deadline = time.monotonic() + 900
    while any(p.poll() is None for p in everyone) and time.monotonic() < deadline:
        engines_seen |= engine_pids(engine_home)
        for info in engine_client.running_engines(engine_home):
            clients_seen |= {c["pid"] for c in info["clients"]}
        loaded_by_a_client |= any(maps_weights(p.pid, weights) for p in everyone if p.poll() is None)
        time.sleep(0.3)
    results = [p.communicate(timeout=60) for p in everyone]
    for p, (_out, err) in zip(everyone, results):
        assert p.returncode == 0, err
    assert len(engines_seen) == 1  # one engine process for the six moot processes (learn included)
    assert not loaded_by_a_client
    assert ask.pid in clients_seen and clients_seen & {w.pid for w in workers}
    answer = json.loads(results[-1][0].strip().splitlines()[-1])
    assert "40" in answer["answer"]
    done = [json.loads(out.strip().splitlines()[-1]) for out, _ in results[:-1]]
    assert sum(d.get("completed", 0) for d in done) == 4, done
