"""`moot deliberate` and `moot graph` pointed at a user's own files with unusual or broken input:
exports in another encoding or separator, rows without a header, missing values, broken rosters,
a --out that cannot be written. Each is read as the user meant or refused in one line that names
the fix, before any model call, and nothing already on disk is lost."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.teams.deliberation.data import load_folder
from moot.teams.deliberation.roster import load_roster
from moot.teams.graph.export import write_graph
from moot.teams.graph.scaffold import Scaffold
from openai_stub import openai_compatible_server
from test_graph_support import make_sources

MOOT = [sys.executable, "-m", "moot"]
STAMP = re.compile(r"\[\d\d:\d\d:\d\d\] ")
DEAD_MODEL = "openai-compatible:http://127.0.0.1:9/v1#m"
"""Nothing listens there: a case that reached a model call would show it (and could not pass)."""

CSV = "date,recovery_pct,sleep_hours\n2026-11-22,60,6.5\n2026-11-23,55,5.5\n2026-11-24,50,5.0\n"
NOTE = "# Week\nManager expects the Q4 deliverable by 9am.\n"


def moot(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MOOT_HOME": str(home), "MOOT_RUNS_DB": str(home / "runs.sqlite3"), "COLUMNS": "200"}
    env.pop("MOOT_MODEL", None)
    return subprocess.run([*MOOT, *args], capture_output=True, text=True, env=env, timeout=60)


def one_error_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a user reads on stderr (progress lines of a pipe are time-stamped)."""
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.strip() and not STAMP.match(line)]
    assert len(errors) == 1, done.stderr
    return errors[0]


def folder(path: Path, files: dict[str, str | bytes]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        (path / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


# --------------------------------------------------------------------------- deliberate: encodings


@pytest.mark.parametrize("files, words", [
    # a binary file named .md used to become a "note" of mojibake and the run went on (exit 0)
    ({"scan.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01", "dump.csv": b"\x00\x01\x02\x03" * 50},
     "a binary file"),
    # Excel's "Unicode text" and Windows editors write UTF-16 with a byte-order mark
    ({"notes.md": NOTE.encode("utf-16"), "whoop.csv": CSV.encode("utf-16")}, "UTF-16 text, not UTF-8: convert it, e.g. iconv -f utf-16"),
])
def test_deliberate_over_files_it_cannot_read_is_one_line_naming_the_fix(tmp_path: Path, files: dict[str, bytes],
                                                                        words: str) -> None:
    data = folder(tmp_path / "data", files)
    done = moot("deliberate", "Should I keep working tonight?", "--data", str(data), "--model", DEAD_MODEL,
                home=tmp_path / "home")
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_error_line(done)
    assert "holds no usable" in line and words in line, line


def test_a_folder_of_spreadsheets_and_sub_folders_is_not_called_empty(tmp_path: Path) -> None:
    data = folder(tmp_path / "data", {"export.xlsx": b"PK\x03\x04"})
    folder(data / "2026", {"whoop.csv": CSV})
    done = moot("deliberate", "Should I rest?", "--data", str(data), "--model", DEAD_MODEL, home=tmp_path / "home")
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_error_line(done)
    assert "is empty" not in line and "export.xlsx" in line and "folders inside it are not read" in line
    assert f"--data {data / '2026'}" in line


def test_a_note_in_another_encoding_is_skipped_with_the_fix_not_garbled(tmp_path: Path) -> None:
    data = load_folder(folder(tmp_path / "d", {
        "whoop.csv": CSV,
        "cafe.md": "Caf\u00e9 cr\u00e8me at 9h, then the report.\n".encode("latin-1"),
        "bom.md": b"\xef\xbb\xbf" + NOTE.encode(),
    }))
    assert set(data.notes) == {"bom.md"} and data.notes["bom.md"].startswith("# Week")
    [skipped] = data.skipped
    assert skipped.file == "cafe.md" and "not UTF-8" in skipped.reason and "iconv" in skipped.reason
    assert not any("\ufffd" in text for text in data.notes.values())


# --------------------------------------------------------------------------- deliberate: CSV shapes


def test_semicolon_and_tab_separated_csv_with_decimal_commas_are_read_by_column(tmp_path: Path) -> None:
    data = load_folder(folder(tmp_path / "d", {
        "european.csv": "date;recovery_pct;sleep_hours\n2026-11-23;55;5,5\n2026-11-24;50;4,75\n",
        "tabs.tsv.csv": "date\tsteps\n2026-11-23\t8100\n2026-11-24\t3800\n",
    }))
    assert data.skipped == []
    assert [v for _, v in data.metrics["sleep_hours"]] == [5.5, 4.75]
    assert [v for _, v in data.metrics["recovery_pct"]] == [55.0, 50.0]
    assert [v for _, v in data.metrics["steps"]] == [8100.0, 3800.0]
    assert data.columns["sleep_hours"].decimals == 2


def test_missing_values_written_as_na_null_or_a_dash_keep_the_rest_of_the_row(tmp_path: Path) -> None:
    data = load_folder(folder(tmp_path / "d", {"whoop.csv": "date,recovery_pct,sleep_hours,steps\n"
                                                            "2026-11-22,NA,6.5,9000\n2026-11-23,55,NaN,null\n"
                                                            "2026-11-24,-,5.0,N/A\n"}))
    assert data.skipped == []
    assert data.metrics["recovery_pct"] == [(data.metrics["recovery_pct"][0][0], 55.0)]
    assert [v for _, v in data.metrics["sleep_hours"]] == [6.5, 5.0]
    assert [v for _, v in data.metrics["steps"]] == [9000.0]


def test_a_csv_without_a_header_row_is_skipped_naming_the_fix_not_read_as_metrics_named_by_numbers(tmp_path: Path) -> None:
    data = load_folder(folder(tmp_path / "d", {"whoop.csv": CSV, "headless.csv": "2026-11-23,55,5.5\n2026-11-24,50,5.0\n",
                                               "only-header.csv": "date,hrv_ms\n"}))
    assert set(data.columns) == {"recovery_pct", "sleep_hours"}  # no metric called "55" or "5_5"
    reasons = {s.file: (s.line, s.reason) for s in data.skipped}
    assert reasons["headless.csv"][0] == 1 and "add a header row" in reasons["headless.csv"][1]
    assert "a header and no rows" in reasons["only-header.csv"][1]


def test_a_csv_row_with_a_huge_cell_is_skipped_with_its_line_and_the_rows_after_it_are_read(tmp_path: Path) -> None:
    # a pasted log in one cell passes the csv module's 128 KB field limit: that raised _csv.Error out of the loader
    data = load_folder(folder(tmp_path / "d", {"whoop.csv": "date,sleep_hours,comment\n"
                                                            f"2026-11-23,6.5,{'x' * 200_000}\n2026-11-24,5.0,ok\n"}))
    assert [v for _, v in data.metrics["sleep_hours"]] == [5.0]
    assert [(s.file, s.line) for s in data.skipped if "not a readable CSV row" in s.reason] == [("whoop.csv", 2)]


# --------------------------------------------------------------------------- deliberate: JSONL and iCalendar


def test_a_message_holding_a_line_separator_is_one_message(tmp_path: Path) -> None:
    # JSON allows U+2028 unescaped in a string (json.dumps(ensure_ascii=False) writes it so)
    lines = [json.dumps({"time": "2026-11-24T10:00:00", "from": "Dana", "text": "first part\u2028second part"}, ensure_ascii=False),
             json.dumps({"time": "2026-11-24T11:00:00", "from": "Marco", "text": "report due 9am"})]
    data = load_folder(folder(tmp_path / "d", {"slack.jsonl": "\n".join(lines) + "\n"}))
    assert data.skipped == []
    assert [m.sender for m in data.messages] == ["Dana", "Marco"] and data.messages[0].text == "first part second part"


def test_message_times_in_milliseconds_since_1970_are_read_as_javascript_writes_them(tmp_path: Path) -> None:
    from datetime import timezone

    lines = [json.dumps({"ts": 1764403200000, "user": "Dana", "text": "in ms"}),
             json.dumps({"ts": "1764406800000", "user": "Marco", "text": "in ms, a string"}),
             json.dumps({"ts": 1764410400, "user": "Ana", "text": "in seconds"}),
             json.dumps({"ts": "yesterday", "user": "Kim", "text": "no time"})]
    data = load_folder(folder(tmp_path / "d", {"chat.jsonl": "\n".join(lines) + "\n"}), tz=timezone.utc)
    assert [(m.sender, m.time.isoformat()) for m in data.messages] == [
        ("Dana", "2025-11-29T08:00:00+00:00"), ("Marco", "2025-11-29T09:00:00+00:00"), ("Ana", "2025-11-29T10:00:00+00:00")]
    assert [s.line for s in data.skipped] == [4] and "milliseconds since 1970" in data.skipped[0].reason


def test_an_event_with_a_broken_end_says_which_event_and_that_the_end_is_broken(tmp_path: Path) -> None:
    ics = ("BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nDTSTART:20261124T203000\nDTEND:2026112\nSUMMARY:Finish report\n"
           "END:VEVENT\nBEGIN:VEVENT\nDTSTART:20261125T090000\nSUMMARY:Report due\nEND:VEVENT\nEND:VCALENDAR\n")
    data = load_folder(folder(tmp_path / "d", {"work.ics": ics}))
    assert [e.title for e in data.events] == ["Report due"]
    [skipped] = data.skipped
    assert "'Finish report' has no usable end (DTEND" in skipped.reason, skipped.reason


# --------------------------------------------------------------------------- deliberate: --roster


ROSTERS = {
    "list of strings": 'coordinator = ["health"]\n',
    "specialist as a string": '[[coordinator]]\ndomain = "x"\nspecialist = "sleep"\n',
    "keywords as a string": '[[coordinator]]\ndomain = "x"\nkeywords = "sleep"\n'
                            '[[coordinator.specialist]]\nname = "y"\nreads = ["calendar"]\n',
}


@pytest.mark.parametrize("case, words", [
    ("list of strings", "has no [[coordinator]] tables"),
    ("specialist as a string", "are not [[coordinator.specialist]] tables"),
    ("keywords as a string", 'keywords = ["sleep", "tired"]'),
    ("latin-1", "is not UTF-8 text"),
    ("folder", "is a folder"),
    ("fifo", "is a FIFO"),  # read with open() this waited forever for a writer
])
def test_a_roster_of_the_wrong_shape_is_one_line_not_a_traceback(tmp_path: Path, case: str, words: str) -> None:
    roster = tmp_path / "roster.toml"
    if case == "folder":
        roster.mkdir()
    elif case == "fifo":
        os.mkfifo(roster)
    elif case == "latin-1":
        roster.write_bytes('[[coordinator]]\ndomain = "sant\u00e9"\n'.encode("latin-1"))
    else:
        roster.write_text(ROSTERS[case])
    data = folder(tmp_path / "data", {"whoop.csv": CSV})
    done = moot("deliberate", "Should I rest?", "--data", str(data), "--roster", str(roster), "--model", DEAD_MODEL,
                home=tmp_path / "home")
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in one_error_line(done)


def test_roster_errors_in_process_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "r.toml"
    bad.write_text(ROSTERS["specialist as a string"])
    with pytest.raises(MootError) as err:
        load_roster(bad)
    assert "r.toml" in err.value.one_line()


# --------------------------------------------------------------------------- graph


def test_graph_over_a_utf16_source_names_the_encoding_not_binary(tmp_path: Path) -> None:
    source = tmp_path / "notes.md"
    source.write_bytes("The Ostby mill draws water from the Varn river.\n".encode("utf-16"))
    done = moot("graph", "How?", "--source", str(source), "--model", DEAD_MODEL, home=tmp_path / "home")
    assert done.returncode == 2, done.stdout + done.stderr
    line = one_error_line(done)
    assert "is UTF-16 text, not UTF-8" in line and "iconv -f utf-16 -t utf-8" in line and "binary" not in line


@pytest.mark.parametrize("where", ["under a file", "a folder"])
def test_graph_out_that_cannot_be_written_is_refused_before_any_model_call(tmp_path: Path, where: str) -> None:
    sources = make_sources(tmp_path / "src")
    blocker = tmp_path / "blocker"
    if where == "under a file":
        blocker.write_text("a file, not a folder")
        out = blocker / "graph.json"
    else:
        out = tmp_path / "graph.json"
        out.mkdir()
    calls: list[int] = []

    def answer(body: dict) -> str:  # type: ignore[type-arg]
        calls.append(1)
        return "{}"

    with openai_compatible_server(answer) as model:
        done = moot("graph", "How does the Ostby mill affect Lake Mira?", "--source", str(sources[0]), "--model", model,
                    "--out", str(out), home=tmp_path / "home")
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"cannot write {out}" in one_error_line(done)
    assert calls == []  # the run did not spend model calls on a graph it could not write


def test_a_failed_graph_write_leaves_the_file_that_was_there(tmp_path: Path) -> None:
    out = tmp_path / "graph.json"
    out.write_text('{"previous": "run"}\n')
    payload = {"answer": "x" * (256 * 1024)}  # larger than the file-size limit set below
    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, old_limit[1]))
    try:
        with pytest.raises(MootError) as err:
            write_graph(out, Scaffold(), payload)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert "cannot write" in err.value.one_line()
    assert out.read_text() == '{"previous": "run"}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["graph.json"]  # no temporary file left behind
