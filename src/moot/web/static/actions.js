// What a user does from the page: start a run of any team, cancel, re-run, download, accept or
// reject a deliberation's insights, and compare two runs side by side. Same rules as app.js:
// every string from a run is put in the page as text, and nothing is sent to any other host.

import { api, authHeaders, badge, fill, fmtCost, fmtDur, fmtInt, h, readable } from "./app.js";

// ------------------------------------------------------------------ start a run

/** Each team's form: its fields (name, label, kind, options) and how a filled form becomes a request. */
const TEAMS = {
  research: {
    label: "Code research: a question about a repository",
    fields: [["prompt", "Question", "textarea"], ["repo", "Repository (a folder on the server, under a --repo-root or indexed)", "text"],
             ["mode", "Mode", "select", ["auto", "single", "multi"]]],
    request: (v) => ["/api/research/runs", { prompt: v.prompt, repo: v.repo, mode: v.mode }],
  },
  ask: {
    label: "Learning team: ask a knowledge base",
    fields: [["kb", "Knowledge base", "kb"], ["question", "Question", "textarea"], ["mode", "Mode", "select", ["auto", "single", "multi"]]],
    request: (v) => [`/api/learning/kbs/${encodeURIComponent(v.kb)}/ask/runs`, { question: v.question, mode: v.mode }],
  },
  learn: {
    label: "Learning team: learn a text into a knowledge base",
    fields: [["kb", "Knowledge base (new or existing)", "text"], ["source", "Source (shown with each fact)", "text"],
             ["published", "Published (ISO date, optional)", "text"], ["text", "Text", "textarea"]],
    request: (v) => [`/api/learning/kbs/${encodeURIComponent(v.kb)}/learn`, { text: v.text, source: v.source || "page", published: v.published || null }],
  },
  graph: {
    label: "Graph reasoning: grow a reasoning graph over files or a knowledge base",
    fields: [["question", "Question", "textarea"], ["sources", "Files on the server, one a line (under a --repo-root)", "textarea"],
             ["kb", "…or a knowledge base (instead of files)", "text"], ["iterations", "Iterations", "number"]],
    request: (v) => ["/api/graph/runs", { question: v.question, sources: v.sources.split("\n").map((x) => x.trim()).filter(Boolean),
                                         kb: v.kb || null, iterations: parseInt(v.iterations || "3", 10) }],
  },
  deliberation: {
    label: "Deliberation: advice from a folder of exports",
    fields: [["request", "What do you want advice on?", "textarea"], ["data", "Folder of exports on the server (under a --repo-root)", "text"],
             ["mode", "Mode", "select", ["quick", "standard", "deep"]]],
    request: (v) => ["/api/deliberation/runs", { request: v.request, data: v.data, mode: v.mode }],
  },
  board: {
    label: "Task board: submit a task (needs moot serve --board)",
    fields: [["description", "Task", "textarea"], ["type", "Type", "text"]],
    request: (v) => ["/api/board/tasks", { description: v.description, type: v.type || "general" }],
  },
};

export async function newRunView(params) {
  const team = TEAMS[params.get("team")] ? params.get("team") : "ask";
  const pick = h("select", { name: "team", "aria-label": "team", onchange: () => { location.hash = "#/new?team=" + pick.value; } },
    Object.entries(TEAMS).map(([k, t]) => h("option", { value: k, selected: k === team }, t.label)));
  const spec = TEAMS[team];
  let kbs = [];
  if (spec.fields.some((f) => f[2] === "kb")) { try { kbs = await api("/api/learning/kbs"); } catch (_) { kbs = []; } }
  const inputs = {};
  const rows = spec.fields.map(([name, label, kind, options]) => {
    let input;
    if (kind === "textarea") input = h("textarea", { name, rows: name === "text" ? 8 : 3 });
    else if (kind === "select") input = h("select", { name }, options.map((o) => h("option", { value: o, selected: o === (name === "mode" && team === "deliberation" ? "standard" : undefined) }, o)));
    else if (kind === "kb") input = kbs.length ? h("select", { name }, kbs.map((k) => h("option", { value: k.name }, `${k.name} (${fmtInt(k.current_facts)} facts)`)))
      : h("input", { name, type: "text", placeholder: "no knowledge base yet: learn a text first" });
    else input = h("input", { name, type: kind, ...(kind === "number" ? { value: 3, min: 1, max: 10 } : {}) });
    inputs[name] = input;
    return h("label", { class: "field" }, h("span", {}, label), input);
  });
  const message = h("p", { class: "error", id: "form-error" });
  const form = h("form", { class: "card runform", id: "new-run", "data-team": team, onsubmit: async (e) => {
    e.preventDefault();
    const values = Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, el.value.trim()]));
    const [path, body] = spec.request(values);
    fill(message, "");
    try {
      const started = await api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
      location.hash = team === "board" ? "#/board" : started.page.replace(/^\/?#/, "#");
    } catch (err) { fill(message, err.message || String(err)); }
  } }, rows, h("div", {}, h("button", { type: "submit", class: "primary" }, "Start")), message);
  fill(document.getElementById("main"), h("h1", {}, "Start a run"), h("div", { class: "filters" }, pick), form,
    h("p", { class: "muted" }, "The run starts on this server's model; its page opens and follows it live."));
  window.__mootRendered = { view: "new", team };
}

// ------------------------------------------------------------------ a run's actions

/** The buttons above a run: cancel (while this server runs it), re-run, download, compare. */
export function actionBar(run, refresh) {
  const message = h("span", { class: "error action-error" });
  const running = run.can_cancel && (run.status === "running" || run.status === "queued");
  const act = (fn) => async (e) => {
    e.target.disabled = true;
    fill(message, "");
    try { await fn(); } catch (err) { fill(message, err.message || String(err)); } finally { e.target.disabled = false; }
  };
  return h("div", { class: "actions" },
    running ? h("button", { class: "danger", "data-action": "cancel", onclick: act(async () => {
      await api("/api/runs/" + encodeURIComponent(run.run_id), { method: "DELETE" });
      await refresh();
    }) }, "Cancel run") : "",
    run.can_rerun ? h("button", { "data-action": "rerun", title: "Start a new run with the same inputs", onclick: act(async () => {
      const started = await api("/api/runs/" + encodeURIComponent(run.run_id) + "/rerun", { method: "POST" });
      location.hash = started.page.replace(/^\/?#/, "#");
    }) }, "Re-run with the same inputs") : "",
    h("button", { "data-action": "download", onclick: act(() => download(run.run_id)) }, "Download JSON"),
    h("a", { class: "button", "data-action": "compare", href: "#/compare?a=" + encodeURIComponent(run.run_id) }, "Compare with…"),
    message);
}

async function download(runId) {
  const res = await fetch("/api/runs/" + encodeURIComponent(runId) + "/export", { headers: authHeaders() });
  if (!res.ok) throw new Error("download refused: " + res.status);
  const url = URL.createObjectURL(await res.blob());
  const a = h("a", { href: url, download: `moot-run-${runId.slice(0, 12)}.json`, style: "display:none" });
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(url); a.remove(); }, 1000);
}

// ------------------------------------------------------------------ deliberation feedback

/** Accept / reject buttons on each insight card, showing the decision already recorded. */
export async function feedbackButtons(run, container) {
  const cards = [...container.querySelectorAll("[data-insight]")];
  if (!cards.length) return;
  let state = { decisions: {} };
  try { state = await api(`/api/deliberation/runs/${encodeURIComponent(run.run_id)}/feedback`); } catch (_) { /* not recorded yet */ }
  const draw = () => {
    for (const card of cards) {
      const id = card.dataset.insight;
      const decided = state.decisions[id];
      let box = card.querySelector(".feedback");
      if (!box) { box = h("div", { class: "feedback" }); card.appendChild(box); }
      const send = (decision) => async () => {
        try {
          state = await api(`/api/deliberation/runs/${encodeURIComponent(run.run_id)}/feedback`, {
            method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ decision, insight_id: id }) });
          draw();
        } catch (err) { fill(box, h("span", { class: "error" }, err.message)); }
      };
      fill(box, decided ? h("span", { class: "decision " + decided, "data-decision": decided }, decided === "accepted" ? "✓ you accepted this" : "✗ you rejected this") : "",
        h("button", { "data-feedback": "accepted", disabled: decided === "accepted", onclick: send("accepted") }, "Accept"),
        h("button", { "data-feedback": "rejected", disabled: decided === "rejected", onclick: send("rejected") }, "Reject"));
    }
  };
  draw();
}

// ------------------------------------------------------------------ compare two runs

const ROWS = [
  ["status", (r) => badge(r.status)],
  ["stop reason", (r) => r.stop_reason_text],
  ["team", (r) => r.team],
  ["duration", (r) => fmtDur(r.duration_s)],
  ["model calls", (r) => fmtInt(r.usage.requests)],
  ["tokens", (r) => fmtInt(r.usage.input_tokens + r.usage.output_tokens)],
  ["cost", (r) => fmtCost(r.usage.cost_usd)],
  ["waiting for the model", (r) => r.timing && r.timing.timed_calls ? `${fmtDur(r.timing.queue_s)} of ${fmtDur(r.timing.model_s)} request time` : "–"],
  ["agents", (r) => [...new Set(r.spans.filter((s) => !s.child_run_id).map((s) => s.agent))].join(", ") || "–"],
  ["runs held", (r) => fmtInt(r.children.length)],
];

function outcome(run) {
  const out = run.output;
  if (out && typeof out === "object") {
    if (out.answer) return readable(out.answer);
    if (out.nodes) return readable(`${out.nodes.length} nodes, ${(out.edges || []).length} edges`);
    if (out.facts) return readable(`${out.facts_stored} facts stored from ${out.source}`);
    return readable(out);
  }
  const last = [...run.spans].reverse().find((s) => s.output != null);
  return last ? readable(last.output) : h("span", { class: "muted" }, "no output recorded");
}

export async function compareView(params) {
  const a = params.get("a"), b = params.get("b");
  const main = document.getElementById("main");
  if (!a || !b) {  // pick the second run
    const page = await api("/api/runs?limit=100");
    const first = a ? await api("/api/runs/" + encodeURIComponent(a)) : null;
    const choose = (name, value) => h("select", { name, "aria-label": name }, h("option", { value: "" }, "choose a run…"),
      page.runs.map((r) => h("option", { value: r.run_id, selected: r.run_id === value }, `${r.name} · ${r.status} · ${new Date(r.started * 1000).toLocaleString()}`)));
    const left = choose("a", a), right = choose("b", b);
    fill(main, h("h1", {}, "Compare two runs"), first ? h("p", {}, "First: ", h("b", {}, first.name)) : "",
      h("form", { class: "card", id: "compare-pick", onsubmit: (e) => {
        e.preventDefault();
        if (left.value && right.value) location.hash = `#/compare?a=${encodeURIComponent(left.value)}&b=${encodeURIComponent(right.value)}`;
      } }, h("div", { class: "filters" }, left, right, h("button", { type: "submit" }, "Compare"))));
    window.__mootRendered = { view: "compare-pick" };
    return;
  }
  const [ra, rb] = await Promise.all([api("/api/runs/" + encodeURIComponent(a)), api("/api/runs/" + encodeURIComponent(b))]);
  const same = (f) => { try { return f(ra).textContent === f(rb).textContent; } catch (_) { return false; } };
  const cell = (v) => (v instanceof Node ? v : document.createTextNode(v == null ? "–" : String(v)));
  fill(main, h("h1", {}, "Compare two runs"),
    h("table", { class: "compare", id: "compare" },
      h("tr", {}, h("th", {}, ""), [ra, rb].map((r) => h("th", { "data-run": r.run_id }, h("a", { href: "#/runs/" + r.run_id }, r.name)))),
      ROWS.map(([label, f]) => {
        const va = f(ra), vb = f(rb);
        const differs = (va instanceof Node ? va.textContent : String(va)) !== (vb instanceof Node ? vb.textContent : String(vb));
        return h("tr", { class: differs ? "differs" : "", "data-row": label }, h("th", {}, label), h("td", {}, cell(va)), h("td", {}, cell(vb)));
      }),
      h("tr", { "data-row": "result" }, h("th", {}, "result"), h("td", {}, outcome(ra)), h("td", {}, outcome(rb)))),
    h("p", { class: "muted" }, same((r) => outcome(r)) ? "Both runs gave the same result." : "Rows that differ are highlighted."));
  window.__mootRendered = { view: "compare", a: ra.run_id, b: rb.run_id };
}

