"""Loading a folder of exports: evidence computed in Python, bad rows/lines/files skipped and named,
empty folders and bad rosters as one line naming the fix, activation by data and request."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from moot.errors import MootError
from moot.teams.deliberation.data import load_folder
from moot.teams.deliberation.evidence import evidence_for
from moot.teams.deliberation.roster import DEFAULT_ROSTER, activate, load_roster

NOW = datetime(2026, 11, 24, 18, 0, tzinfo=timezone.utc)

CSV = """date,recovery_pct,hrv_ms,sleep_hours
2026-11-17,70,47,7.5
2026-11-18,72,48,7.2
2026-11-19,68,46,7.0
2026-11-20,71,47,7.4
2026-11-21,69,48,6.8
2026-11-22,60,45,6.0
2026-11-23,55,43,5.5
2026-11-24,50,40,5.0
2026-11-25,bad,41,7
2026-11-26,1,2
"""

ICS = """BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:1
DTSTART:20261125T090000Z
DTEND:20261125T100000Z
SUMMARY:Q4 report due to manager
END:VEVENT
END:VCALENDAR
"""


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text)
    return folder


def test_facts_are_computed_and_bad_input_is_skipped_with_file_and_line(tmp_path: Path) -> None:
    folder = write(tmp_path / "d", {
        "whoop.csv": CSV, "work.ics": ICS, "broken.ics": "this is not a calendar",
        "slack.jsonl": '{"time": "2026-11-24T16:00:00Z", "source": "slack", "from": "Dana", "text": "Report due tomorrow 9am, urgent"}\n'
                       'not json at all\n{"time": "yesterday", "text": "x"}\n',
        "notes.md": "# Week\nManager expects the Q4 deliverable by 9am.\n",
    })
    data = load_folder(folder)
    skipped = {(s.file, s.line) for s in data.skipped}
    assert ("whoop.csv", 10) in skipped and ("whoop.csv", 11) in skipped
    assert ("slack.jsonl", 2) in skipped and ("slack.jsonl", 3) in skipped
    assert ("broken.ics", None) in skipped
    reasons = " ".join(s.reason for s in data.skipped)
    assert "is not a number" in reasons and "not JSON" in reasons and "iCalendar" in reasons
    # the rest is used
    assert len(data.metrics["hrv_ms"]) == 8 and len(data.events) == 1 and len(data.messages) == 1 and data.notes
    texts = [f.text for f in evidence_for(data, ["metrics:hrv_ms", "metrics:recovery_pct"], NOW)]
    # 40 against the mean of the 7 days before (47,48,46,47,48,45,43 → 46.3), rounded as the data is written
    assert texts[0] == "heart-rate variability 40 ms today against a weekly average of 46 ms"
    assert "heart-rate variability has fallen day after day: 45 → 43 → 40" in texts
    assert "recovery score 50 % today against a weekly average of 66 %" in texts
    cal = [f.text for f in evidence_for(data, ["calendar"], NOW)]
    assert cal[0] == "calendar: 'Q4 report due to manager' Wed 09:00–10:00"
    assert cal[1].startswith("free time in the calendar: Tue 18:00–22:00, Wed 06:00–09:00")
    msgs = [f.text for f in evidence_for(data, ["messages"], NOW)]
    assert msgs == ["message from Dana (slack, Tue 16:00): “Report due tomorrow 9am, urgent”"]


def test_csv_headers_in_words_give_the_metric_its_name_and_unit(tmp_path: Path) -> None:
    folder = write(tmp_path / "w", {"export.csv": "Day,Recovery score %,Heart rate variability (ms),Zone\n"
                                                  + "".join(f"2026-11-{d},{60 + d % 3},{40 + d % 2},Europe/Rome\n" for d in range(16, 25))})
    data = load_folder(folder)
    assert {k: (c.label, c.unit) for k, c in data.columns.items()} == {
        "recovery_score": ("recovery score", "%"), "heart_rate_variability": ("heart rate variability", "ms")}
    assert any("left out: Zone" in s.reason for s in data.skipped)
    [found] = [f for f in evidence_for(data, ["metrics:heart rate"], NOW) if f.kind == "metric"]
    assert found.value == 40 and found.unit == "ms" and found.text.startswith("heart rate variability 40 ms today")


def test_empty_and_missing_folders_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(MootError) as missing:
        load_folder(tmp_path / "nope")
    assert "does not exist" in missing.value.one_line() and "--data DIR" in missing.value.one_line()
    (tmp_path / "empty").mkdir()
    with pytest.raises(MootError) as empty:
        load_folder(tmp_path / "empty")
    assert "is empty" in empty.value.one_line()
    write(tmp_path / "junk", {"x.jsonl": "nope\n"})
    with pytest.raises(MootError) as junk:
        load_folder(tmp_path / "junk")
    assert "x.jsonl: not JSON" in junk.value.one_line()


def test_roster_toml_and_unknown_data_kinds(tmp_path: Path) -> None:
    good = tmp_path / "r.toml"
    good.write_text('[[coordinator]]\ndomain = "body"\nkeywords = ["sleep"]\n'
                    '[[coordinator.specialist]]\nname = "sleeper"\nfocus = "sleep"\nreads = ["metrics:sleep_hours"]\n')
    roster = load_roster(good)
    assert roster.coordinators[0].specialists[0].reads == ("metrics:sleep_hours",)
    bad = tmp_path / "bad.toml"
    bad.write_text('[[coordinator]]\ndomain = "body"\n[[coordinator.specialist]]\nname = "x"\nreads = ["fitbit"]\n')
    with pytest.raises(MootError) as err:
        load_roster(bad)
    line = err.value.one_line()
    assert "unknown data kind 'fitbit'" in line and "metrics:<column or words>" in line


def test_activation_follows_data_and_says_why_others_are_off(tmp_path: Path) -> None:
    data = load_folder(write(tmp_path / "d", {"whoop.csv": CSV, "work.ics": ICS}))
    act = activate(DEFAULT_ROSTER, data, "Should I work late on the report or sleep?", 2)
    assert [c.domain for c, _ in act.active] == ["health", "work"]
    assert act.inactive["lifestyle"].startswith("no data")
    one = activate(DEFAULT_ROSTER, data, "Should I work late on the report or sleep?", 1)
    assert len(one.active) == 1 and "at most 1 coordinator" in one.inactive[[d for d in ("health", "work") if d != one.active[0][0].domain][0]]
    # a folder with nothing any specialist reads is answered without any model call
    (tmp_path / "g.toml").write_text('[[coordinator]]\ndomain = "metabolic"\n[[coordinator.specialist]]\nname = "glucose"\n'
                                     'reads = ["metrics:glucose"]\n')
    none = activate(load_roster(tmp_path / "g.toml"), data, "How is my glucose?", 2)
    assert none.active == [] and "glucose" in none.no_data_reason


def test_message_exports_name_their_time_text_and_sender_as_chat_and_mail_exports_do(tmp_path: Path) -> None:
    # a chat export that says "timestamp" and "author", one that writes seconds since 1970 as "ts", a
    # mail export's "sent_at"/"body"; a line with no time at all is still skipped, and says what it needs
    folder = write(tmp_path / "m", {
        "chat.jsonl": '{"timestamp": "2026-11-24T16:00:00Z", "author": "Dana", "text": "Standup moved to 9:30"}\n'
                      '{"ts": "1795536000.000100", "user": "Kit", "message": "deploy window is short"}\n'
                      '{"ts": 1795539600, "text": "ok"}\n'
                      '{"author": "Lee", "text": "no time here"}\n',
        "mail.jsonl": '{"sent_at": "2026-11-24T08:15:00+00:00", "sender": "boss@example.com", "body": "Slides by Friday"}\n',
    })
    data = load_folder(folder, tz=timezone.utc)
    got = sorted((m.time.isoformat(), m.sender, m.text) for m in data.messages)
    assert got == [
        ("2026-11-24T08:15:00+00:00", "boss@example.com", "Slides by Friday"),
        ("2026-11-24T16:00:00+00:00", "Dana", "Standup moved to 9:30"),
        ("2026-11-24T16:00:00.000100+00:00", "Kit", "deploy window is short"),
        ("2026-11-24T17:00:00+00:00", "", "ok"),
    ]
    [skipped] = data.skipped
    assert (skipped.file, skipped.line) == ("chat.jsonl", 4) and '"timestamp"' in skipped.reason
