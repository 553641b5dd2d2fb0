// moot's web page: the runs list, a run's timeline and its team's result, the task board.
// Plain ES module, no framework, no request to any other host. Everything a model wrote is
// untrusted: it is only ever put into the page as text (textContent), never as markup.

import { actionBar, compareView, feedbackButtons, newRunView } from "./actions.js";
import { forceLayout, placeLabels } from "./graphlayout.js";

const main = document.getElementById("main");
const conn = document.getElementById("conn");
let cleanup = [];            // what the current view must stop when the user leaves it
const TOKEN_KEY = "moot.token";

// ------------------------------------------------------------------ small helpers

/** An element: attrs (on* are listeners), children (strings become text nodes, never markup). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "style") el.setAttribute("style", v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}
/** Replace an element's children (strings as text, arrays flattened). */
export function fill(el, ...children) { el.replaceChildren(); return append(el, children); }
function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v); else el.setAttribute(k, String(v));
  }
  for (const c of children.flat()) el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}
export const fmtInt = (n) => (n || 0).toLocaleString("en-US");
export const fmtCost = (c) => (c ? "$" + (c < 0.01 ? c.toFixed(5) : c.toFixed(3)) : "$0");
export function fmtDur(sec) {
  if (sec === null || sec === undefined) return "–";
  if (sec < 1) return Math.round(sec * 1000) + " ms";
  if (sec < 120) return sec.toFixed(1) + " s";
  return Math.floor(sec / 60) + " min " + Math.round(sec % 60) + " s";
}
const fmtTime = (ts) => (ts ? new Date(ts * 1000).toLocaleString() : "–");
export const badge = (status) => h("span", { class: "badge " + status }, status);
function pretty(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** A value as readable text: strings as paragraphs, lists as bullets, objects as labelled rows;
 * never JSON syntax (nested deeper than four levels, the rest is shown compactly). */
export function readable(value, depth = 0) {
  if (value === null || value === undefined || value === "") return h("span", { class: "muted" }, "–");
  if (typeof value === "string") return h("div", { class: "model-text prose" }, value);
  if (typeof value !== "object") return h("span", {}, String(value));
  if (!Array.isArray(value) && typeof value.source === "string" && typeof value.target === "string") {
    // a link (a graph's relationship, a hypothesis's edge): one line, not a table
    const kind = String(value.type || value.relation || "links to").replace(/_/g, " ");
    return h("span", {}, `${value.source.replace(/_/g, " ")} —${kind}→ ${value.target.replace(/_/g, " ")}`);
  }
  if (depth > 5) return h("code", {}, JSON.stringify(value));
  if (Array.isArray(value)) {
    if (!value.length) return h("span", { class: "muted" }, "none");
    return h("ul", { class: "readable" }, value.map((v) => h("li", {}, readable(v, depth + 1))));
  }
  const entries = Object.entries(value);
  if (!entries.length) return h("span", { class: "muted" }, "–");
  return h("div", { class: "kv readable" }, entries.map(([k, v]) => [h("div", {}, k.replace(/_/g, " ")), h("div", {}, readable(v, depth + 1))]));
}

// ------------------------------------------------------------------ the API (with the token, if any)

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }
export function authHeaders() { const t = token(); return t ? { Authorization: "Bearer " + t } : {}; }

class NeedToken extends Error {}
export async function api(path, options = {}) {
  const res = await fetch(path, { ...options, headers: { ...authHeaders(), ...(options.headers || {}) } });
  if (res.status === 401) throw new NeedToken("this server needs a token");
  if (!res.ok) {
    let detail = res.statusText;
    try { detail = (await res.json()).detail || detail; } catch (_) { /* not JSON */ }
    const err = new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
    err.status = res.status;
    throw err;
  }
  return res.json();
}

/** Server-Sent Events over fetch (EventSource cannot send the Authorization header). */
function stream(path, onEvent, onEnd) {
  const controller = new AbortController();
  (async () => {
    try {
      const res = await fetch(path, { headers: { ...authHeaders(), Accept: "text/event-stream" }, signal: controller.signal });
      if (!res.ok || !res.body) { onEnd && onEnd(new Error("stream refused: " + res.status)); return; }
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let name = "message", data = "";
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) name = line.slice(6).trim();
            else if (line.startsWith("data:")) data += line.slice(5).trim();
          }
          if (data) { try { onEvent(name, JSON.parse(data)); } catch (_) { onEvent(name, data); } }
        }
      }
      onEnd && onEnd(null);
    } catch (e) {
      if (e.name !== "AbortError") onEnd && onEnd(e);
    }
  })();
  return () => controller.abort();
}

function showError(err) {
  if (err instanceof NeedToken) return tokenView();
  fill(main, h("div", { class: "card error" }, "Error: ", err.message || String(err)));
}

function tokenView() {
  const input = h("input", { type: "password", placeholder: "token", autocomplete: "off", size: 40 });
  const form = h("form", { class: "card tokenbox", onsubmit: (e) => {
    e.preventDefault(); sessionStorage.setItem(TOKEN_KEY, input.value.trim()); route();
  } }, h("h2", {}, "This server needs a token"),
    h("p", { class: "muted" }, "Enter the token moot serve was started with (--token or MOOT_SERVE_TOKEN). It stays in this tab only."),
    input, " ", h("button", { type: "submit" }, "Open"));
  fill(main, form);
  input.focus();
}

// ------------------------------------------------------------------ the runs list

const listState = { team: "", status: "", q: "", when: "", offset: 0, limit: 50 };
const WINDOWS = { "": ["any time", 0], "1h": ["last hour", 3600], "24h": ["last 24 hours", 86400], "7d": ["last 7 days", 7 * 86400] };
const KEYS = ["team", "status", "q", "when"];

async function runsView(params) {
  for (const k of KEYS) listState[k] = params.get(k) || "";
  listState.offset = parseInt(params.get("offset") || "0", 10) || 0;
  const teamSel = h("select", { "aria-label": "team", onchange: () => go({ team: teamSel.value, offset: 0 }) },
    ["", "research", "learning", "graph", "deliberation", "board", "other"].map((t) =>
      h("option", { value: t, selected: t === listState.team }, t || "all teams")));
  const statusSel = h("select", { "aria-label": "status", onchange: () => go({ status: statusSel.value, offset: 0 }) },
    ["", "running", "completed", "stopped", "failed", "cancelled"].map((t) =>
      h("option", { value: t, selected: t === listState.status }, t || "any status")));
  const whenSel = h("select", { "aria-label": "started", onchange: () => go({ when: whenSel.value, offset: 0 }) },
    Object.entries(WINDOWS).map(([k, [label]]) => h("option", { value: k, selected: k === listState.when }, label)));
  const search = h("input", { type: "search", placeholder: "search name or id…", value: listState.q, "aria-label": "search" });
  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => go({ q: search.value, offset: 0 }), 250); });
  const body = h("div", { id: "runs-body" }, h("p", { class: "muted" }, "Loading runs…"));
  fill(main, h("h1", {}, "Runs"), h("div", { class: "filters" }, teamSel, statusSel, whenSel, search), body);
  if (listState.q) { search.focus(); search.setSelectionRange(search.value.length, search.value.length); }
  const load = async () => {
    const qs = new URLSearchParams({ limit: listState.limit, offset: listState.offset });
    for (const k of ["team", "status", "q"]) if (listState[k]) qs.set(k, listState[k]);
    if (WINDOWS[listState.when] && WINDOWS[listState.when][1]) qs.set("since", String(Date.now() / 1000 - WINDOWS[listState.when][1]));
    const t0 = performance.now();
    const page = await api("/api/runs?" + qs);
    fill(body, runsTable(page));
    window.__mootRendered = { view: "runs", at: performance.now(), ms: performance.now() - t0, rows: page.runs.length, total: page.total };
    return page;
  };
  const page = await load();
  // a list with running runs refreshes itself
  const poll = setInterval(() => { if (document.visibilityState === "visible") load().catch(() => {}); },
    page.runs.some((r) => r.status === "running") ? 2000 : 5000);
  cleanup.push(() => clearInterval(poll));
}

function go(changes) {
  const p = new URLSearchParams();
  const next = { ...listState, ...changes };
  for (const k of KEYS) if (next[k]) p.set(k, next[k]);
  if (next.offset) p.set("offset", next.offset);
  const hash = "#/" + (p.toString() ? "?" + p : "");
  if (location.hash !== hash) location.hash = hash; else route();
}

function runsTable(page) {
  if (!page.runs.length) {
    return h("div", { class: "card muted" }, page.total ? "No runs on this page." :
      "No runs match. Runs appear here as soon as any moot command or this server starts one (try: moot chat, moot ask, moot graph).");
  }
  const rows = page.runs.map((r) => h("tr", { class: "run", "data-run": r.run_id, onclick: () => { location.hash = "#/runs/" + r.run_id; } },
    h("td", {}, h("span", { class: "team" }, r.team)),
    h("td", { class: "name" }, h("a", { href: "#/runs/" + r.run_id }, r.name)),
    h("td", {}, badge(r.status)),
    h("td", { class: "reason" }, r.stop_reason || ""),
    h("td", { class: "num" }, fmtInt(r.usage.requests)),
    h("td", { class: "num" }, fmtInt(r.usage.input_tokens + r.usage.output_tokens)),
    h("td", { class: "num" }, fmtCost(r.usage.cost_usd)),
    h("td", { class: "num" }, r.status === "running" ? "running" : fmtDur(r.duration_s)),
    h("td", { class: "num" }, fmtTime(r.started))));
  const last = Math.min(page.offset + page.limit, page.total);
  return h("div", {},
    h("table", { class: "runs" },
      h("thead", {}, h("tr", {}, ["team", "name", "status", "stop reason"].map((c) => h("th", {}, c)),
        ["calls", "tokens", "cost", "duration", "started"].map((c) => h("th", { class: "num" }, c)))),
      h("tbody", {}, rows)),
    h("div", { class: "pager" },
      h("button", { disabled: page.offset === 0, onclick: () => go({ offset: Math.max(0, page.offset - page.limit) }) }, "← newer"),
      h("span", { class: "muted", id: "runs-count" }, `${fmtInt(page.offset + 1)}–${fmtInt(last)} of ${fmtInt(page.total)} runs`),
      h("button", { disabled: last >= page.total, onclick: () => go({ offset: page.offset + page.limit }) }, "older →")));
}

// ------------------------------------------------------------------ one run

async function runView(runId) {
  const head = h("div", {});
  const budget = h("div", {});
  const timeline = h("div", {});
  const detail = h("div", { id: "span-detail" });
  const team = h("div", { id: "team-result" });
  const events = h("div", {});
  const kept = h("div", {});
  fill(main, h("p", {}, h("a", { href: "#/" }, "← all runs")), head, kept, budget,
    h("h2", {}, "Timeline"), h("p", { class: "muted" }, "One lane per agent on a shared time axis; click a span for its model requests, tool calls and output."),
    timeline, detail, team, events);
  let selected = null, closed = false, lastRun = null;
  const render = (run) => {
    const t0 = performance.now();
    lastRun = run;
    fill(head, runHeader(run), actionBar(run, async () => render(await api("/api/runs/" + encodeURIComponent(runId)))));
    fill(budget, budgetView(run));
    fill(timeline, timelineView(run, selected, (span) => { selected = span.task_id; render(lastRun); }));
    const span = run.spans.find((x) => x.task_id === selected);
    fill(detail, span ? spanDetail(span, run) : "");
    if (!team.dataset.kind || team.dataset.version !== String(run.events) + run.status) {
      team.dataset.kind = run.output_kind || "";
      team.dataset.version = String(run.events) + run.status;
      fill(team, teamView(run));
      if (run.output_kind === "deliberation") feedbackButtons(run, team);
    }
    fill(kept, keptView(run));
    fill(events, teamEvents(run));
    window.__mootRendered = { view: "run", at: performance.now(), ms: performance.now() - t0, spans: run.spans.length, status: run.status };
  };
  let run = await api("/api/runs/" + encodeURIComponent(runId));
  render(run);
  if (run.status === "running" || run.status === "queued") {
    let pending = null;
    const refresh = async () => {
      pending = null;
      if (closed) return;
      try { render(await api("/api/runs/" + encodeURIComponent(runId))); } catch (_) { /* next event retries */ }
    };
    const schedule = (delay) => { if (!pending) pending = setTimeout(refresh, delay); };
    conn.textContent = "live";
    const stop = stream("/api/runs/" + encodeURIComponent(runId) + "/events", (name) => {
      if (name === "done") { clearTimeout(pending); pending = null; refresh(); } else schedule(300);
    }, () => { conn.textContent = ""; setTimeout(refresh, 50); });
    // A parent's children write their own events, not the parent's: poll while it runs, so
    // their spans and the parent's sums move too.
    const poll = setInterval(() => { if (lastRun && (lastRun.status === "running" || lastRun.status === "queued")) schedule(0); }, 2000);
    cleanup.push(() => { closed = true; stop(); clearTimeout(pending); clearInterval(poll); conn.textContent = ""; });
  }
}

function runHeader(run) {
  const u = run.usage;
  return h("div", {},
    h("h1", {}, run.name),
    h("div", {}, badge(run.status), " ", h("span", { class: "team" }, run.team), " · ", h("code", {}, run.run_id),
      run.status === "running" || run.status === "queued" ? h("span", { class: "live" }, "  ● live") : ""),
    h("p", { class: "reasontext", id: "stop-reason" }, run.stop_reason_text),
    run.timing && run.timing.timed_calls ? h("p", { class: "muted", id: "run-timing" }, "Time: " + run.timing.sentence + ".") : "",
    run.parent_run_id ? h("p", {}, "Part of ", h("a", { href: "#/runs/" + run.parent_run_id }, "run " + run.parent_run_id.slice(0, 12))) : "",
    h("div", { class: "stats" },
      stat("model calls", fmtInt(u.requests)), stat("input tokens", fmtInt(u.input_tokens)),
      stat("output tokens", fmtInt(u.output_tokens)), stat("cost", fmtCost(u.cost_usd)),
      stat("duration", run.status === "running" ? fmtDur(Date.now() / 1000 - run.started) + "…" : fmtDur(run.duration_s)),
      run.children.length ? stat("runs held", fmtInt(run.children.length) + (run.children.some((c) => c.status === "running") ?
        ` (${run.children.filter((c) => c.status === "running").length} running)` : "")) : "",
      !run.children.length || run.spans.some((x) => !x.child_run_id) ? stat("agents", fmtInt(run.lanes.filter((l) => !run.spans.some((x) => x.agent === l && x.child_run_id)).length)) : "",
      stat("started", fmtTime(run.started))),
    run.prompt ? h("p", {}, h("span", { class: "muted" }, "request: "), run.prompt) : "",
    run.content_recorded ? h("p", { class: "muted" }, "Prompts and responses were recorded for this run (open a span to read them).") : "",
    run.children.length ? h("details", { open: run.children.length <= 10 }, h("summary", {}, `Runs inside this one (${run.children.length})`),
      h("ul", {}, run.children.map((c) => h("li", {}, badge(c.status), " ", h("a", { href: "#/runs/" + c.run_id }, c.name),
        h("span", { class: "muted" }, ` · ${fmtInt(c.usage.requests)} calls · ${fmtDur(c.duration_s)}`))))) : "");
}
const stat = (label, value) => h("div", {}, h("span", {}, label), h("b", {}, value));

function budgetView(run) {
  if (!run.budget.length && !run.budget_events.length) return "";
  const unit = { calls: (v) => fmtInt(v), tokens: (v) => fmtInt(v), cost_usd: (v) => fmtCost(v), seconds: (v) => fmtDur(v) };
  return h("div", {}, h("h2", {}, "Budget"),
    h("div", { class: "budget" }, run.budget.map((b) => {
      const share = b.limit ? Math.min(1, b.used / b.limit) : 0;
      return [h("div", {}, b.which), h("div", { class: "bar" }, h("i", { class: share >= 1 ? "full" : share >= 0.8 ? "high" : "", style: `width:${(share * 100).toFixed(1)}%` })),
        h("div", { class: "muted" }, `${unit[b.which] ? unit[b.which](b.used) : b.used} of ${unit[b.which] ? unit[b.which](b.limit) : b.limit}`)];
    })),
    run.budget_events.map((e) => h("p", { class: e.type === "budget_stop" ? "error" : "muted" },
      e.type === "budget_stop" ? "Stopped: " : "Warning: ", e.payload.reason || e.payload.detail || "", e.agent ? ` (${e.agent})` : "")));
}

function timelineView(run, selected, onPick) {
  if (!run.spans.length) return h("div", { class: "card muted" }, run.status === "running" || run.status === "queued" ? "Waiting for the first agent to start…" : "This run recorded no agent spans.");
  const now = Date.now() / 1000;
  const t0 = Math.min(run.started, ...run.spans.map((x) => x.started));
  const end = Math.max(run.finished || 0, ...run.spans.map((x) => x.finished || (run.status === "running" ? now : x.started)));
  const total = Math.max(end - t0, 0.001);
  const pct = (t) => ((t - t0) / total) * 100;
  const ticks = [];
  const unit = axisUnit(total);
  const step = niceStep(total * unit[1] / 8) / unit[1];  // ticks at round numbers of the unit
  for (let t = 0; t <= total + 1e-9; t += step) ticks.push(t);
  const grid = ticks.map((t) => h("div", { class: "tl-grid", style: `left:${(t / total) * 100}%` }));
  const axis = h("div", { class: "tl-axis" }, h("div", { class: "tl-label muted" }, "agent"),
    h("div", { class: "tl-track" }, ticks.map((t) => h("span", { class: "tl-tick", style: `left:${(t / total) * 100}%` }, fmtAxis(t, step, unit)))));
  const lanes = run.lanes.map((agent) => h("div", { class: "tl-lane", "data-lane": agent },
    h("div", { class: "tl-label", title: agent }, agent),
    h("div", { class: "tl-track" }, grid.map((g) => g.cloneNode()),
      run.spans.filter((x) => x.agent === agent).map((x) => {
        const stop = x.finished || (run.status === "running" ? now : x.started);
        const left = pct(x.started), width = Math.max(pct(stop) - left, 0.15);
        return h("div", { class: `span ${x.status}${x.child_run_id ? " child" : ""}${x.failed_tools ? " tool-failed" : ""}${x.task_id === selected ? " selected" : ""}`,
          "data-task": x.task_id, "data-child": x.child_run_id || null,
          "data-start": x.started, "data-end": stop, style: `left:${left}%;width:${width}%`,
          title: `${x.task_id} · ${x.status} · ${fmtDur(stop - x.started)} · ${fmtInt(x.usage.requests)} calls` +
            (x.waited_s ? ` · waited ${fmtDur(x.waited_s)}` : "") + (x.failed_tools ? ` · ${x.failed_tools} failed tool calls` : ""),
          onclick: () => onPick(x) }, x.child_run_id ? x.name : x.failed_tools ? "⚠ " + x.task_id : x.task_id);
      }))));
  return h("div", { class: "timeline", id: "timeline" }, axis, lanes);
}
function niceStep(raw) {
  const p = Math.pow(10, Math.floor(Math.log10(raw || 1)));
  for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}
/** The axis's unit, chosen once for the whole view from its length: every tick in ms, s or min. */
function axisUnit(total) {
  if (total < 1) return ["ms", 1000];
  if (total < 180) return ["s", 1];
  if (total < 3 * 3600) return ["min", 1 / 60];
  return ["h", 1 / 3600];
}
function fmtAxis(t, step, unit) {
  const [name, per] = unit;
  const digits = Math.max(0, -Math.floor(Math.log10(step * per) + 1e-9));
  return (t * per).toFixed(digits) + " " + name;
}

function spanDetail(span, run) {
  if (span.child_run_id) return h("div", { class: "card detail" },
    h("h3", {}, span.name),
    h("div", { class: "kv" },
      h("div", {}, "status"), h("div", {}, badge(span.status), span.stop_reason ? ` (${span.stop_reason})` : ""),
      h("div", {}, "time"), h("div", {}, `${fmtDur((span.finished || Date.now() / 1000) - span.started)} from +${fmtDur(span.started - run.started)}`),
      h("div", {}, "usage"), h("div", {}, `${fmtInt(span.usage.requests)} calls · ${fmtInt(span.usage.input_tokens)} in · ${fmtInt(span.usage.output_tokens)} out · ${fmtCost(span.usage.cost_usd)}`)),
    h("p", {}, h("a", { href: "#/runs/" + span.child_run_id, class: "open-child" }, "open this run →")));
  const calls = span.model_calls;
  return h("div", { class: "card detail" },
    h("h3", {}, `${span.task_id} — ${span.agent}`),
    h("div", { class: "kv" },
      h("div", {}, "status"), h("div", {}, badge(span.status), span.stop_reason ? ` (${span.stop_reason})` : ""),
      h("div", {}, "time"), h("div", {}, `${fmtDur((span.finished || Date.now() / 1000) - span.started)} from +${fmtDur(span.started - run.started)}`),
      h("div", {}, "usage"), h("div", {}, `${fmtInt(span.usage.requests)} calls · ${fmtInt(span.usage.input_tokens)} in · ${fmtInt(span.usage.output_tokens)} out · ${fmtCost(span.usage.cost_usd)}`),
      calls.some((c) => c.queue_s != null) ? [h("div", {}, "waited"), h("div", {}, `${fmtDur(span.waited_s)} of its model requests' time was waiting for the model`)] : "",
      span.failed_tools ? [h("div", {}, "tool errors"), h("div", { class: "error" }, `${span.failed_tools} of ${span.tool_calls.length} tool calls failed`)] : "",
      span.depends_on.length ? [h("div", {}, "after"), h("div", {}, span.depends_on.join(", "))] : "",
      span.error ? [h("div", {}, "error"), h("div", { class: "error" }, span.error)] : ""),
    h("h3", {}, `Model requests (${calls.length})`),
    calls.length ? h("table", { class: "calls" },
      h("tr", {}, ["turn", "model", "latency", "waiting", "prompt", "generation", "in", "out", "cost", "finish", "tools asked"].map((c) => h("th", {}, c))),
      calls.map((c) => [h("tr", { class: "call" }, h("td", {}, c.turn), h("td", {}, c.model || ""), h("td", {}, c.latency_s != null ? fmtDur(c.latency_s) : "…"),
        h("td", { class: "queue", "data-s": c.queue_s }, c.queue_s != null ? fmtDur(c.queue_s) : "–"),
        h("td", { class: "prompt", "data-s": c.prompt_s }, c.prompt_s != null ? fmtDur(c.prompt_s) : "–"),
        h("td", { class: "generation", "data-s": c.generation_s, title: c.prompt_s == null && c.generation_s != null ? "the provider did not report prompt time apart: it is included here" : null },
          c.generation_s != null ? fmtDur(c.generation_s) : "–"),
        h("td", {}, fmtInt(c.input_tokens)), h("td", {}, fmtInt(c.output_tokens)), h("td", {}, fmtCost(c.cost_usd)),
        h("td", {}, c.finish_reason || ""), h("td", {}, c.tool_calls.join(", "))),
        c.messages || c.text ? h("tr", {}, h("td", { colspan: 11 },
          c.messages ? h("details", {}, h("summary", {}, "prompt"), c.messages.map((m) => h("pre", {}, `[${m.role || m.kind || "message"}] ` + pretty(m.content !== undefined ? m.content : m)))) : "",
          c.text != null ? h("details", { open: true }, h("summary", {}, "response"), h("pre", { class: "model-text" }, c.text)) : "")) : ""])) :
      h("p", { class: "muted" }, "none"),
    span.tool_calls.length ? [h("h3", {}, `Tool calls (${span.tool_calls.length})`), h("table", { class: "calls" },
      h("tr", {}, ["tool", "arguments", "result"].map((c) => h("th", {}, c))),
      span.tool_calls.map((t) => h("tr", {}, h("td", {}, t.tool), h("td", {}, h("code", {}, t.arguments || "")),
        h("td", { class: t.error ? "error" : "" }, t.error || t.result || ""))))] : "",
    span.output != null ? [h("h3", {}, "Output"), h("div", { class: "output" }, readable(span.output))] : "");
}

function teamEvents(run) {
  if (!run.team_events.length) return "";
  return h("details", {}, h("summary", {}, `Team events (${run.team_events.length})`),
    h("table", { class: "calls" }, run.team_events.map((e) => h("tr", {},
      h("td", {}, "+" + fmtDur(e.ts - run.started)), h("td", {}, e.type), h("td", {}, e.agent || ""),
      h("td", {}, readable(e.payload))))));
}

// ------------------------------------------------------------------ team results

function keptView(run) {
  if (["running", "queued", "completed"].includes(run.status)) return "";
  return h("div", { id: "kept" }, h("h2", {}, `What this run kept (${run.kept.length})`),
    run.kept.length ? run.kept.map((k) => h("div", { class: "card kept", "data-kept": k.task_id },
      k.child_run_id ? [badge(k.status), " ", h("a", { href: "#/runs/" + k.child_run_id }, k.name)] :
        [h("b", {}, k.task_id), h("span", { class: "muted" }, ` · ${k.agent}`), readable(k.output)])) :
      h("p", { class: "muted" }, "Nothing: no task had finished when it stopped."));
}

function learnedView(l) {
  const facts = l.facts || [];
  return h("div", { id: "learned" }, h("h2", {}, `Facts stored (${l.facts_stored} new of ${facts.length})`),
    h("p", { class: "muted" }, `from ${l.source}${l.published ? " (" + l.published + ")" : ""}: ${l.facts_extracted} found, ` +
      `${l.duplicates} already known, ${l.dropped} dropped${l.forgotten ? `, ${l.forgotten} passages forgotten` : ""}`),
    l.summary ? h("div", { class: "card" }, h("span", { class: "muted" }, "summary: "), h("span", { class: "model-text" }, l.summary)) : "",
    h("table", { class: "calls facts" }, h("tr", {}, ["", "fact", "entity", "attribute", "value", "date"].map((c) => h("th", {}, c))),
      facts.map((f) => h("tr", { "data-fact": f.id, class: f.new ? "new" : "" }, h("td", {}, f.new ? "new" : "known"),
        h("td", { class: "model-text" }, f.content), h("td", {}, f.entity || ""), h("td", {}, f.attribute || ""),
        h("td", {}, f.value || ""), h("td", {}, f.source_date || "")))));
}

function teamView(run) {
  const out = run.output;
  if (!out) return "";
  if (run.output_kind === "learned") return learnedView(out);
  if (run.output_kind === "graph") return graphView(out);
  if (run.output_kind === "deliberation") return deliberationView(out);
  if (run.output_kind === "answer") return answerView(out);
  if (run.output_kind === "research") return researchView(out);
  return h("div", {}, h("h2", {}, "Result"), readable(out));
}

function answerView(a) {
  const t = a.trace || {};
  return h("div", { id: "answer" }, h("h2", {}, "Answer"),
    h("div", { class: "card" }, h("p", { class: "model-text" }, a.answer),
      h("div", { class: "kv" },
        h("div", {}, "intent"), h("div", {}, `${a.intent}${t.intent_decided_by ? " (decided by " + t.intent_decided_by + ")" : ""}`),
        h("div", {}, "retrieval strategy"), h("div", {}, t.retrieval_note || t.retrieval_strategy || "–"),
        h("div", {}, "mode"), h("div", {}, `${a.mode}${t.mode_rule ? " — " + t.mode_rule : ""}`),
        h("div", {}, "agents"), h("div", {}, (a.sub_agents || []).join(", ") || "–"),
        h("div", {}, "confidence"), h("div", {}, (a.confidence ?? 0).toFixed(2) + (a.knows ? "" : " (the knowledge base does not hold the answer)")))),
    h("h3", {}, `Facts used (${(a.facts_used || []).length})`),
    (a.facts_used || []).map((f) => h("div", { class: "quote" }, `[#${f.id}] `, f.content,
      h("div", { class: "muted" }, "source: ", f.source || "?", f.source_date ? " · " + f.source_date : ""))),
    (t.sub_agents || []).length ? [h("h3", {}, "Sub-agents"), h("table", { class: "calls" },
      h("tr", {}, ["task", "agent", "status", "calls", "note"].map((c) => h("th", {}, c))),
      t.sub_agents.map((x) => h("tr", {}, h("td", {}, x.task), h("td", {}, x.agent + (x.fallback_agent ? " → " + x.fallback_agent : "")),
        h("td", {}, badge(x.status)), h("td", {}, x.calls), h("td", {}, x.error || ""))))] : "",
    (t.notes || []).map((n) => h("p", { class: "muted" }, "note: ", n)));
}

function researchView(r) {
  return h("div", {}, h("h2", {}, "Answer"), h("div", { class: "card" }, h("pre", { class: "model-text" }, r.answer || "")),
    r.evidence ? h("details", {}, h("summary", {}, `Evidence (${r.evidence.length})`), readable(r.evidence)) : "",
    r.verification ? h("details", {}, h("summary", {}, "Verification"), readable(r.verification)) : "");
}

function deliberationView(d) {
  const debates = new Map((d.debates || []).map((x) => [x.conflict_id, x]));
  const votesBy = new Map();
  for (const v of d.votes || []) { if (!votesBy.has(v.insight_id)) votesBy.set(v.insight_id, []); votesBy.get(v.insight_id).push(v); }
  return h("div", { id: "deliberation" },
    h("h2", {}, "Decision"), h("div", { class: "card decision" }, h("pre", { class: "model-text" }, d.answer || "")),
    ((d.reading || {}).options || []).length ? h("p", { class: "muted options" }, "Options read from the request: ",
      d.reading.options.map((o) => `${o.option_id} ${o.label} (${o.time_from})`).join(" · ")) : "",
    h("h2", {}, `Ranked insights (${(d.insights || []).length})`),
    (d.insights || []).map((i, n) => h("div", { class: "card insight" + (i.low_consensus ? " low" : ""), "data-insight": i.insight_id },
      h("b", {}, `${n + 1}. `), h("span", { class: "model-text" }, i.recommendation),
      h("div", { class: "muted" }, `${i.agent} · ${i.domain} · impact ${i.impact} · confidence ${fmtC(i.confidence)} → adjusted ${fmtC(i.adjusted_confidence)}`,
        i.consensus_score != null ? ` · consensus ${i.consensus_score.toFixed(2)}` : ""),
      i.low_consensus ? h("div", { class: "flag" }, "⚑ low consensus: the other agents did not agree") : "",
      i.unresolved ? h("div", { class: "flag" }, "⚑ in an unresolved conflict") : "",
      (i.evidence || []).length ? h("details", {}, h("summary", {}, "evidence"), i.evidence.map((e) => h("div", { class: "quote" }, e))) : "",
      votesBy.has(i.insight_id) ? h("div", { class: "muted" }, "votes: ",
        votesBy.get(i.insight_id).map((v) => `${v.voting_agent} ${v.vote > 0 ? "+" : ""}${v.vote}`).join(", ")) : "")),
    h("h2", {}, `Conflicts and debates (${(d.conflicts || []).length})`),
    (d.conflicts || []).length ? "" : h("p", { class: "muted" }, "No conflicts between insights."),
    (d.conflicts || []).map((c) => {
      const debate = debates.get(c.id);
      return h("div", { class: "card debate", "data-conflict": c.id },
        h("b", {}, `${c.type} conflict (${c.severity})`), h("span", { class: "muted" }, ` · found by ${c.detected_by}`),
        h("div", { class: "rounds" },
          h("div", { class: "head" }, "round"), h("div", { class: "head" }, c.agent_a.name), h("div", { class: "head" }, c.agent_b.name),
          h("div", { class: "head" }, "positions"), h("div", {}, c.agent_a.position), h("div", {}, c.agent_b.position),
          (debate ? debate.rounds : []).map((r) => [
            h("div", { class: "head round" }, `${r.round_number}. ${r.round_type}`),
            h("div", {}, r.agent_a_response || "–"), h("div", {}, r.agent_b_response || "–")])),
        debate ? h("p", {}, h("b", {}, debate.status === "resolved" ? "Resolved: " : "Unresolved: "),
          debate.resolution.resolution || debate.reason || "", debate.resolution.compromise_type ? ` (${debate.resolution.compromise_type})` : "") :
          h("p", { class: "muted" }, "not debated"));
    }),
    h("h2", {}, `Votes (${(d.votes || []).length})`),
    (d.votes || []).length ? h("table", { class: "calls votes" }, h("tr", {}, ["insight", "voter", "vote", "why"].map((c) => h("th", {}, c))),
      d.votes.map((v) => h("tr", {}, h("td", {}, v.insight_id), h("td", {}, v.voting_agent),
        h("td", { class: v.vote > 0 ? "v2" : v.vote < 0 ? "vm" : "" }, (v.vote > 0 ? "+" : "") + v.vote), h("td", {}, v.reasoning)))) :
      h("p", { class: "muted" }, "No votes."));
}
// confidences come as shares (0.85) from most teams and as percentages (85) from deliberation
const fmtC = (c) => (c == null ? "–" : Number(c) > 1 ? Math.round(Number(c)) + "%" : Number(c).toFixed(2));

// ------------------------------------------------------------------ the reasoning graph (SVG, pan/zoom, replay)

function graphView(g) {
  const nodes = g.nodes || [], edges = g.edges || [];
  const its = [...nodes.map((n) => n.iteration || 0), ...edges.map((e) => e.iteration || 0)];
  const maxIt = Math.max(0, ...its), minIt = Math.min(maxIt, ...its);
  const info = h("div", { class: "card", id: "graph-info" }, h("p", { class: "muted" }, "Click a node or an edge to see its confidence and evidence."));
  const svg = s("svg", { class: "graph", id: "graph", viewBox: "0 0 800 540" });
  const layer = s("g", {});
  svg.appendChild(layer);
  const nodeText = (n) => (n.kind === "placeholder" ? "? " : "") + n.label;
  const placed = placeLabels(nodes, edges, forceLayout(nodes, edges), nodeText, (e) => e.type);
  const pos = new Map(nodes.map((n) => [n.id, placed.at(n.id)]));
  // the first view fits the whole graph; labels scale with it, so they never come to overlap
  const all = [...pos.values()].map((p) => ({ x: p.x - p.r, y: p.y - p.r, w: 2 * p.r, h: 2 * p.r }))
    .concat([...placed.nodes.values(), ...placed.edges.values()]);
  const x0 = Math.min(0, ...all.map((b) => b.x)) - 10, y0 = Math.min(0, ...all.map((b) => b.y)) - 10;
  const x1 = Math.max(0, ...all.map((b) => b.x + b.w)) + 10, y1 = Math.max(0, ...all.map((b) => b.y + b.h)) + 10;
  const fitK = Math.min(800 / (x1 - x0), 540 / (y1 - y0), 1.5);
  const fit = { k: fitK, x: (800 - (x1 - x0) * fitK) / 2 - x0 * fitK, y: (540 - (y1 - y0) * fitK) / 2 - y0 * fitK };
  let view = { ...fit }, selected = null, shown = maxIt;
  const labelText = (b, cls) => s("text", { x: b.left, y: b.base, "font-size": b.px, class: cls }, b.text);
  // Labels too small to read are hidden (a 200-node graph fitted in the box): the browser draws
  // text that small at a minimum size, so it would only blot the picture. Zoom in to read them.
  const applyView = () => {
    layer.setAttribute("transform", `translate(${view.x},${view.y}) scale(${view.k})`);
    svg.classList.toggle("small", view.k * 9 < 6);
  };
  const zoomTo = (k) => {  // about the centre of the box
    view.x = 400 - ((400 - view.x) * k) / view.k; view.y = 270 - ((270 - view.y) * k) / view.k; view.k = k; applyView();
  };
  const draw = () => {
    fill(layer);
    const visible = new Set(nodes.filter((n) => (n.iteration || 0) <= shown).map((n) => n.id));
    for (const e of edges) {
      if ((e.iteration || 0) > shown || !visible.has(e.source) || !visible.has(e.target)) continue;
      const a = pos.get(e.source), b = pos.get(e.target);
      if (!a || !b) continue;
      layer.appendChild(s("g", { class: `edge${e.provisional ? " provisional" : ""}${selected === e.id ? " selected" : ""}`, "data-edge": e.id,
        onclick: (ev) => { ev.stopPropagation(); selected = e.id; showEdge(e); draw(); } },
        s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": 1 + 3 * (e.strength || 0) }),
        s("line", { x1: a.x, y1: a.y, x2: b.x, y2: b.y, "stroke-width": 10, stroke: "transparent", style: "stroke:transparent" }),
        placed.edges.has(e.id) ? labelText(placed.edges.get(e.id), "label") : s("title", {}, e.type)));
    }
    for (const n of nodes) {
      if (!visible.has(n.id)) continue;
      const p = pos.get(n.id);
      const r = p.r;
      const fill = n.kind === "placeholder" ? "#fff7ed" : `hsl(${Math.round(120 * (n.confidence || 0))},70%,75%)`;
      layer.appendChild(s("g", { class: `node ${n.kind}${selected === n.id ? " selected" : ""}`, "data-node": n.id,
        onclick: (ev) => { ev.stopPropagation(); selected = n.id; showNode(n); draw(); } },
        s("circle", { cx: p.x, cy: p.y, r, fill }),
        placed.nodes.has(n.id) ? labelText(placed.nodes.get(n.id), "label") : s("title", {}, nodeText(n))));
    }
    applyView();
  };
  const evidence = (list) => (list || []).length ? list.map((e) => h("div", { class: "quote" }, "“", e.quote, "” ", h("span", { class: "muted" }, "— ", e.source))) :
    h("p", { class: "muted" }, "No evidence quoted.");
  const showNode = (n) => fill(info, h("h3", {}, n.kind === "placeholder" ? "Placeholder (provisional): " : "Entity: ", n.label),
    h("div", { class: "kv" }, h("div", {}, "confidence"), h("div", {}, fmtC(n.confidence)), h("div", {}, "added in iteration"), h("div", {}, n.iteration || 0),
      n.why_relevant ? [h("div", {}, "why relevant"), h("div", {}, n.why_relevant)] : "",
      n.description ? [h("div", {}, "stands for"), h("div", {}, n.description)] : "",
      n.challenge ? [h("div", {}, "skeptic"), h("div", {}, n.challenge)] : ""),
    n.kind === "placeholder" ? h("p", { class: "flag" }, "Provisional: the evidence implies something here but does not name it.") : "",
    (n.constraints || []).map((c) => h("div", { class: "muted" }, "constraint: ", c)), h("h3", {}, "Evidence"), evidence(n.evidence));
  const label = (id) => (nodes.find((n) => n.id === id) || { label: id }).label;
  const showEdge = (e) => fill(info, h("h3", {}, `${label(e.source)} —${e.type}→ ${label(e.target)}`),
    h("div", { class: "kv" }, h("div", {}, "strength"), h("div", {}, fmtC(e.strength)), h("div", {}, "provisional"), h("div", {}, e.provisional ? "yes" : "no"),
      h("div", {}, "added in iteration"), h("div", {}, e.iteration || 0), e.challenge ? [h("div", {}, "skeptic"), h("div", {}, e.challenge)] : ""),
    h("h3", {}, "Evidence"), evidence(e.evidence));
  // pan and zoom
  let drag = null;
  svg.addEventListener("pointerdown", (ev) => { drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y }; svg.setPointerCapture(ev.pointerId); });
  svg.addEventListener("pointermove", (ev) => { if (drag) { view.x = drag.vx + ev.clientX - drag.x; view.y = drag.vy + ev.clientY - drag.y; applyView(); } });
  svg.addEventListener("pointerup", () => { drag = null; });
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const k = Math.min(5, Math.max(0.2, view.k * (ev.deltaY < 0 ? 1.15 : 1 / 1.15)));
    const box = svg.getBoundingClientRect();
    const mx = ((ev.clientX - box.left) / box.width) * 800, my = ((ev.clientY - box.top) / box.height) * 540;
    view.x = mx - ((mx - view.x) * k) / view.k; view.y = my - ((my - view.y) * k) / view.k; view.k = k; applyView();
  }, { passive: false });
  const slider = h("input", { type: "range", min: minIt, max: maxIt, value: maxIt, id: "iteration", "aria-label": "iteration" });
  const sliderLabel = h("span", {}, `iteration ${maxIt} of ${maxIt}`);
  slider.addEventListener("input", () => { shown = Number(slider.value); sliderLabel.textContent = `iteration ${shown} of ${maxIt}`; draw(); });
  draw();
  const noise = g.noise || {};
  return h("div", { id: "graph-result" },
    h("h2", {}, "Reasoning graph"),
    h("div", { class: "card" }, h("pre", { class: "model-text" }, g.answer || "")),
    h("div", { class: "filters" }, "Replay: ", slider, sliderLabel,
      h("button", { onclick: () => { view = { ...fit }; applyView(); } }, "fit"),
      h("button", { "data-zoom": "1", title: "labels at their actual size", onclick: () => zoomTo(1) }, "100 %"),
      h("span", { class: "muted" }, ` · ${nodes.length} nodes, ${edges.length} edges · noise ${fmtC(noise.current)} (target ${fmtC(noise.target)})${g.converged ? " · converged" : ""}`)),
    h("p", { class: "legend" }, "Drag to pan, scroll to zoom (labels show once they are large enough to read). Node colour and size: confidence (red low, green high). Dashed: provisional (placeholders, unconfirmed links)."),
    h("div", { class: "graphwrap" }, svg, info),
    (g.gaps || []).length ? h("details", {}, h("summary", {}, `Gaps (${g.gaps.length})`), g.gaps.map((x) => h("div", { class: "quote" }, x.description || readable(x)))) : "",
    (g.hypotheses || []).length ? h("details", {}, h("summary", {}, `Hypotheses (${g.hypotheses.length})`), readable(g.hypotheses)) : "");
}

// ------------------------------------------------------------------ the task board, live

async function boardView() {
  const cols = h("div", { class: "columns", id: "board" });
  const status = h("p", { class: "muted" }, "Connecting…");
  fill(main, h("h1", {}, "Task board"), status, cols);
  const names = ["pending", "active", "completed", "failed"];
  let board = "", tasks = new Map();  // the page's copy of the board: columns once, then changes
  const newest = (t) => t.finished_at || t.claimed_at || t.created_at || 0;
  const render = () => {
    fill(status, `Board ${board} · `, h("span", { class: "live" }, "● live"));
    const by = Object.fromEntries(names.map((c) => [c, []]));
    for (const t of tasks.values()) (by[t.status] || by.failed).push(t);
    fill(cols, ...names.map((c) => h("div", { class: "column", "data-column": c },
      h("h3", {}, `${c} (${by[c].length})`),
      by[c].sort((a, b) => newest(b) - newest(a)).slice(0, 200).map((t) => h("div", { class: "task", "data-task": t.id },
        h("div", {}, t.description),
        h("div", { class: "meta" }, `${t.id} · ${t.type}${t.claimed_by ? " · " + t.claimed_by : ""}${t.attempts ? " · attempt " + t.attempts : ""}`),
        t.error ? h("div", { class: "meta error" }, t.error) : "",
        c === "completed" && t.result != null ? h("details", {}, h("summary", {}, "result"), readable(t.result)) : "")))));
  };
  const load = (b) => {
    board = b.board;
    tasks = new Map(names.flatMap((c) => b[c].map((t) => [t.id, t])));
    render();
  };
  const apply = (change) => {
    for (const id of change.removed || []) tasks.delete(id);
    for (const t of change.changed || []) tasks.set(t.id, t);
    render();
  };
  try {
    load(await api("/api/board"));
  } catch (err) {
    if (err.status === 404) { fill(status, err.message); return; }
    throw err;
  }
  const stop = stream("/api/board/events", (name, data) => {
    if (name === "board") load(data);
    else if (name === "change") apply(data);
  }, (err) => { if (err) fill(status, "Disconnected: " + err.message); });
  cleanup.push(stop);
}

// ------------------------------------------------------------------ routing

async function route() {
  for (const stop of cleanup.splice(0)) stop();
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  const params = new URLSearchParams(query || "");
  if (params.get("token")) {  // `moot ui --token` opens the page with the token in the fragment (never sent)
    sessionStorage.setItem(TOKEN_KEY, params.get("token"));
    params.delete("token");
    history.replaceState(null, "", "#" + path + (params.toString() ? "?" + params : ""));
  }
  for (const a of document.querySelectorAll("[data-nav]")) a.classList.toggle("active", a.dataset.nav === (path.match(/^\/(board|new|compare)/) || [null, "runs"])[1]);
  try {
    const m = path.match(/^\/runs\/([^/]+)$/);
    if (m) await runView(decodeURIComponent(m[1]));
    else if (path.startsWith("/new")) await newRunView(params);
    else if (path.startsWith("/compare")) await compareView(params);
    else if (path.startsWith("/board")) await boardView();
    else await runsView(params);
  } catch (err) { showError(err); }
}

window.addEventListener("hashchange", route);
route();
