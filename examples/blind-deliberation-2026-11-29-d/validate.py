#!/usr/bin/env python3
"""Structural checks for this blind set (python3 standard library only)."""
import csv, json, os, re, sys, datetime as dt
from collections import Counter

ROOT = os.path.dirname(os.path.abspath(__file__))
TIME_KEYS = {"time", "timestamp", "sent_at", "date"}
SENDER_KEYS = {"from", "sender", "author", "name"}
TEXT_KEYS = {"text", "body", "message", "content"}
errors = []

def err(m): errors.append(m)

def num(x):
    try: float(x); return True
    except ValueError: return False

scen = json.load(open(os.path.join(ROOT, "scenarios.json"), encoding="utf-8"))
if len(scen) != 15: err(f"expected 15 scenarios, got {len(scen)}")
golds = Counter(s["gold"] for s in scen)
if golds != Counter({"A": 5, "B": 5, "both": 5}): err(f"gold distribution {golds}")
keys = {"id", "folder", "request", "now", "option_a", "option_b", "gold", "why"}
for s in scen:
    sid = s.get("id")
    if set(s) != keys: err(f"{sid}: keys {sorted(s)}")
    if s["option_a"] not in s["request"]: err(f"{sid}: option_a not in request")
    if s["option_b"] not in s["request"]: err(f"{sid}: option_b not in request")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", s["now"]): err(f"{sid}: bad now")
    now = dt.datetime.fromisoformat(s["now"])
    if now.year != 2027 or now.month in (3, 4, 5): err(f"{sid}: now not 2027 / in Mar-May")
    folder = os.path.join(ROOT, s["folder"])
    files = sorted(os.listdir(folder))
    csvs = [f for f in files if f.endswith(".csv")]
    icss = [f for f in files if f.endswith(".ics")]
    jsonls = [f for f in files if f.endswith(".jsonl")]
    mds = [f for f in files if f.endswith(".md")]
    if not 1 <= len(csvs) <= 2: err(f"{sid}: {len(csvs)} csv files")
    if len(icss) != 1: err(f"{sid}: {len(icss)} ics files")
    if len(jsonls) != 1: err(f"{sid}: {len(jsonls)} jsonl files")
    if len(mds) > 1: err(f"{sid}: {len(mds)} md files")
    changes = []
    for fn in csvs:
        with open(os.path.join(folder, fn), newline="") as f:
            rows = list(csv.reader(f))
        head, body = rows[0], rows[1:]
        if not 8 <= len(body) <= 12: err(f"{sid}/{fn}: {len(body)} rows")
        if head.count("date") != 1: err(f"{sid}/{fn}: date column count {head.count('date')}")
        di = head.index("date")
        others = [i for i in range(len(head)) if i != di]
        if not 3 <= len(others) <= 6: err(f"{sid}/{fn}: {len(others)} numeric columns")
        dates = []
        for r in body:
            if len(r) != len(head): err(f"{sid}/{fn}: ragged row"); continue
            dates.append(dt.date.fromisoformat(r[di]))
            for i in others:
                if not num(r[i]): err(f"{sid}/{fn}: non-numeric {r[i]!r}")
        for a, b in zip(dates, dates[1:]):
            if (b - a).days != 1: err(f"{sid}/{fn}: dates not consecutive")
        if dates and dates[-1] != now.date(): err(f"{sid}/{fn}: last date {dates[-1]} != {now.date()}")
        for i in others:
            vals = [float(r[i]) for r in body]
            prev = sum(vals[:-1]) / (len(vals) - 1)
            if abs(prev) >= 1:
                changes.append((fn, head[i], (vals[-1] - prev) / abs(prev)))
    big = [c for c in changes if abs(c[2]) > 0.10]
    if s["gold"] == "A" and len(big) < 3: err(f"{sid}: gold A but only {len(big)} columns moved >10%")
    if s["gold"] == "both" and any(abs(c[2]) > 0.05 for c in changes): err(f"{sid}: gold both but a column moved >5%")
    for fn in jsonls:
        lines = [l for l in open(os.path.join(folder, fn), encoding="utf-8").read().splitlines() if l.strip()]
        if not 3 <= len(lines) <= 7: err(f"{sid}/{fn}: {len(lines)} lines")
        me = False
        for l in lines:
            o = json.loads(l)
            if not isinstance(o, dict): err(f"{sid}/{fn}: not an object"); continue
            tk, sk, xk = TIME_KEYS & set(o), SENDER_KEYS & set(o), TEXT_KEYS & set(o)
            if len(tk) != 1 or len(sk) != 1 or len(xk) != 1: err(f"{sid}/{fn}: keys {sorted(o)}"); continue
            t = dt.datetime.fromisoformat(o[tk.pop()])
            if t >= now: err(f"{sid}/{fn}: message at {t} not before now")
            if o[sk.pop()] in ("me", "Me"): me = True
            if not o[xk.pop()].strip(): err(f"{sid}/{fn}: empty text")
        if not me: err(f"{sid}/{fn}: person never appears as me/Me")
    for fn in icss:
        raw = open(os.path.join(folder, fn), "rb").read()
        if raw.replace(b"\r\n", b"").count(b"\n") or raw.replace(b"\r\n", b"").count(b"\r"): err(f"{sid}/{fn}: not CRLF")
        text = raw.decode("utf-8")
        if not text.startswith("BEGIN:VCALENDAR\r\n"): err(f"{sid}/{fn}: bad start")
        if not text.rstrip("\r\n").endswith("END:VCALENDAR"): err(f"{sid}/{fn}: bad end")
        lines = text.replace("\r\n ", "").split("\r\n")
        evs, cur = [], None
        for l in lines:
            if l == "BEGIN:VEVENT": cur = {}
            elif l == "END:VEVENT": evs.append(cur); cur = None
            elif cur is not None and ":" in l:
                k, v = l.split(":", 1); cur[k.split(";")[0]] = v
        if not 5 <= len(evs) <= 7: err(f"{sid}/{fn}: {len(evs)} VEVENTs")
        for e in evs:
            for k in ("DTSTART", "DTEND", "SUMMARY"):
                if k not in e: err(f"{sid}/{fn}: VEVENT missing {k}")
            if "DTSTART" in e and "DTEND" in e:
                if not (re.fullmatch(r"\d{8}T\d{6}", e["DTSTART"]) and re.fullmatch(r"\d{8}T\d{6}", e["DTEND"])):
                    err(f"{sid}/{fn}: non-floating time {e['DTSTART']} {e['DTEND']}")
                else:
                    a = dt.datetime.strptime(e["DTSTART"], "%Y%m%dT%H%M%S")
                    b = dt.datetime.strptime(e["DTEND"], "%Y%m%dT%H%M%S")
                    if b <= a: err(f"{sid}/{fn}: DTEND not after DTSTART")
        if sum(1 for e in evs if "LOCATION" in e) * 2 <= len(evs): err(f"{sid}/{fn}: fewer than most with LOCATION")
    for fn in mds:
        heads = re.findall(r"^## (.+)$", open(os.path.join(folder, fn), encoding="utf-8").read(), re.M)
        if not heads: err(f"{sid}/{fn}: no dated headings")
        for h in heads:
            if not re.fullmatch(r"2027-\d\d-\d\d", h.strip()): err(f"{sid}/{fn}: heading {h!r}"); continue
            if dt.date.fromisoformat(h.strip()) > now.date(): err(f"{sid}/{fn}: note {h} after now")

if errors:
    print("\n".join(errors)); print(f"FAILED: {len(errors)} problem(s)"); sys.exit(1)
print(f"OK: 15 scenarios, gold {dict(sorted(golds.items()))}, all files pass")
