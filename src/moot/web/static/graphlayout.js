// Laying out a reasoning graph in the page, with no library and no network: a force-directed
// layout (repulsion between every pair, springs along edges, a weak pull to the centre so
// separate components stay near), then labels placed so that no two overlap.
//
// The layout is deterministic (same graph, same picture): nodes start on a sunflower spiral in
// the order given, and nothing is random. Labels keep their font size at every zoom, so a
// placement without overlaps stays so when the user zooms; when some label finds no free place
// the whole layout is spread further apart and the labels are placed again.

export const NODE_FONT_PX = 11;
export const EDGE_FONT_PX = 9;

let probe = null;
const measured = new Map();
/** A label's drawn box at a font size, measured by the browser on a hidden SVG text: its width,
 * height and top relative to the baseline (fonts differ between machines, and a fallback font
 * can make a line far taller than its font size). */
export function measure(text, px) {
  const key = px + "\u0000" + text;
  if (measured.has(key)) return measured.get(key);
  if (!probe) {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "graph probe");
    svg.setAttribute("style", "position:absolute;left:-10000px;top:0;width:10px;height:10px;visibility:hidden");
    probe = document.createElementNS("http://www.w3.org/2000/svg", "text");
    probe.setAttribute("class", "label");
    svg.appendChild(probe);
    document.body.appendChild(svg);
  }
  probe.setAttribute("font-size", px);
  probe.textContent = text;
  const b = probe.getBBox();
  const m = { w: b.width, h: b.height, top: b.y };
  measured.set(key, m);
  return m;
}

export const nodeRadius = (n) => 8 + 10 * (n.confidence || 0);

/** Positions for every node id: a force-directed layout of ``nodes`` linked by ``edges``. */
export function forceLayout(nodes, edges, { iterations = 300 } = {}) {
  const n = nodes.length;
  const pos = new Map();
  const golden = Math.PI * (3 - Math.sqrt(5));
  const ideal = 70;  // a spring's rest length, in px
  nodes.forEach((node, i) => {
    const r = ideal * 0.6 * Math.sqrt(i + 0.5);
    pos.set(node.id, { x: r * Math.cos(i * golden), y: r * Math.sin(i * golden), dx: 0, dy: 0, r: nodeRadius(node) });
  });
  const links = edges.filter((e) => e.source !== e.target && pos.has(e.source) && pos.has(e.target))
    .map((e) => [pos.get(e.source), pos.get(e.target)]);
  const list = [...pos.values()];
  let temp = ideal * 2;
  for (let it = 0; it < iterations; it++) {
    for (const a of list) { a.dx = 0; a.dy = 0; }
    for (let i = 0; i < n; i++) {
      const a = list[i];
      for (let j = i + 1; j < n; j++) {
        const b = list[j];
        let dx = a.x - b.x, dy = a.y - b.y;
        let d2 = dx * dx + dy * dy;
        if (d2 < 1e-6) { dx = (i - j) * 0.01; dy = 0.01; d2 = dx * dx + dy * dy; }
        const d = Math.sqrt(d2);
        const f = (ideal * ideal) / d;  // Fruchterman–Reingold repulsion
        a.dx += (dx / d) * f; a.dy += (dy / d) * f; b.dx -= (dx / d) * f; b.dy -= (dy / d) * f;
      }
    }
    for (const [a, b] of links) {
      const dx = a.x - b.x, dy = a.y - b.y;
      const d = Math.max(Math.sqrt(dx * dx + dy * dy), 1e-3);
      const f = (d * d) / ideal;  // attraction along edges
      a.dx -= (dx / d) * f; a.dy -= (dy / d) * f; b.dx += (dx / d) * f; b.dy += (dy / d) * f;
    }
    for (const a of list) {
      a.dx -= a.x * 0.02 * ideal / 10; a.dy -= a.y * 0.02 * ideal / 10;  // gravity: components stay together
      const d = Math.sqrt(a.dx * a.dx + a.dy * a.dy);
      if (d > 0) { const step = Math.min(d, temp); a.x += (a.dx / d) * step; a.y += (a.dy / d) * step; }
    }
    temp = Math.max(0.5, temp * 0.985);  // cooling
  }
  return pos;
}

const overlaps = (a, b, pad = 1) => a.x < b.x + b.w + pad && b.x < a.x + a.w + pad && a.y < b.y + b.h + pad && b.y < a.y + a.h + pad;

/** A uniform grid of placed boxes, so a placement test looks at neighbours only. */
class Boxes {
  constructor(cell) { this.cell = cell; this.grid = new Map(); }
  keys(b) {
    const out = [];
    for (let i = Math.floor(b.x / this.cell); i <= Math.floor((b.x + b.w) / this.cell); i++)
      for (let j = Math.floor(b.y / this.cell); j <= Math.floor((b.y + b.h) / this.cell); j++) out.push(i + "," + j);
    return out;
  }
  free(b) { return !this.keys(b).some((k) => (this.grid.get(k) || []).some((o) => overlaps(o, b))); }
  add(b) { for (const k of this.keys(b)) { if (!this.grid.has(k)) this.grid.set(k, []); this.grid.get(k).push(b); } }
}

function box(text, px, cx, cy) {  // a label's box centred on (cx, cy), and the baseline that draws it there
  const m = measure(text, px);
  const w = m.w + 2, h = m.h + 2;
  return { x: cx - w / 2, y: cy - h / 2, w, h, px, text, left: cx - m.w / 2, base: cy - m.h / 2 - m.top };
}

/** Places one label per node and per edge, none over another or over a node; returns
 * ``{nodes: Map(id → box), edges: Map(id → box), scale}`` with positions multiplied by ``scale``
 * (the layout spread apart until every label found a place). */
export function placeLabels(nodes, edges, pos, nodeText, edgeText) {
  for (let scale = 1, tries = 0; ; scale *= 1.2, tries++) {
    const at = (id) => { const p = pos.get(id); return { x: p.x * scale, y: p.y * scale, r: p.r }; };
    const taken = new Boxes(40);
    for (const n of nodes) { const p = at(n.id); taken.add({ x: p.x - p.r, y: p.y - p.r, w: 2 * p.r, h: 2 * p.r }); }
    const nodeBoxes = new Map(), edgeBoxes = new Map();
    let missed = 0;
    for (const n of nodes) {
      const p = at(n.id), text = nodeText(n);
      const w = measure(text, NODE_FONT_PX).w + 2, gap = p.r + 3;
      const lh = measure(text, NODE_FONT_PX).h;
      const spots = [];
      for (const k of [0, 1, 2, 3]) {
        const off = k * NODE_FONT_PX;
        spots.push([p.x + gap + w / 2 + off, p.y], [p.x - gap - w / 2 - off, p.y], [p.x, p.y - gap - lh / 2 - off],
                   [p.x, p.y + gap + lh / 2 + off], [p.x + gap + w / 2, p.y - (k + 1) * lh * 0.6], [p.x + gap + w / 2, p.y + (k + 1) * lh * 0.6]);
      }
      const b = spots.map(([x, y]) => box(text, NODE_FONT_PX, x, y)).find((c) => taken.free(c));
      if (b) { taken.add(b); nodeBoxes.set(n.id, b); } else missed++;
    }
    for (const e of edges) {
      if (!pos.has(e.source) || !pos.has(e.target)) continue;
      const a = at(e.source), c = at(e.target), text = edgeText(e);
      const len = Math.hypot(c.x - a.x, c.y - a.y) || 1, nx = -(c.y - a.y) / len, ny = (c.x - a.x) / len;
      let b = null;
      for (const t of [0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8]) {
        for (const o of [0, 0.5, -0.5, 1, -1, 1.5, -1.5].map((f) => f * measure(text, EDGE_FONT_PX).h)) {
          const cand = box(text, EDGE_FONT_PX, a.x + (c.x - a.x) * t + nx * o, a.y + (c.y - a.y) * t + ny * o);
          if (taken.free(cand)) { b = cand; break; }
        }
        if (b) break;
      }
      if (b) { taken.add(b); edgeBoxes.set(e.id, b); } else missed++;
    }
    if (!missed || tries >= 12) return { nodes: nodeBoxes, edges: edgeBoxes, scale, at };
  }
}
