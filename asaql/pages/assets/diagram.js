// asaql's job page: the selection on the diagram and its details (the step as written, the
// operators that run it), the zoom (fit to the frame by default), each line cut to its box's
// width, and the run's numbers on the input and output boxes.
const operators = Object.fromEntries((data.graph.operators || []).map((o) => [o.id, o]));
const svg = document.getElementById("job-diagram");
const frame = svg.closest(".diagram-frame");
const natural = { width: Number(svg.getAttribute("width")), height: Number(svg.getAttribute("height")) };
const INSET = 10;  // the text's margin at each side of a box (asaql/pages/diagram.py)
let zoom = null;   // null: fit to the frame; else the scale the user chose

// The numbers of a box, as the summary line says them, in rows of two cells: an input's
// events read, accepted, dropped and malformed, and its policy's late, early and out-of-order
// events; an output's rows. Each is the run's counter, never a sum of others.
function numbersText(node, numbers) {
  if (!numbers) return [];
  const n = (name) => fmt(numbers[name]);
  if (node.kind === "input") {
    return [[`read ${n("Read Events")}`, `accepted ${n("Accepted Events")}`],
      [`dropped ${n("Dropped Events")}`, `malformed ${n("Malformed Events")}`],
      [`late ${n("Late Input Events")}`, `early ${n("Early Input Events")}`],
      [`out of order ${n("Out-of-Order Events")}`]];
  }
  if (node.kind === "output") return [[`rows ${n("Output Events")}`]];
  return [];
}

// Cut a line (a <text> or <tspan>) to its box's width, ending in "…"; the whole line stays in
// data-full (and in the box's tooltip).
function fitLine(line, width) {
  const full = line.dataset.full !== undefined ? line.dataset.full : line.textContent;
  line.dataset.full = full;
  line.textContent = full;
  if (line.getComputedTextLength() <= width) return;
  let low = 0;
  let high = full.length;
  while (low < high) {  // the longest start of the line that fits with its "…"
    const middle = Math.ceil((low + high) / 2);
    line.textContent = full.slice(0, middle).trimEnd() + "…";
    if (line.getComputedTextLength() <= width) low = middle; else high = middle - 1;
  }
  line.textContent = full.slice(0, low).trimEnd() + "…";
}

function fitBox(g) {
  const width = Number(g.querySelector("rect").getAttribute("width")) - 2 * INSET;
  g.querySelectorAll("text.tag, text.title, text.detail").forEach((line) => fitLine(line, width));
  g.querySelectorAll("text.numbers tspan").forEach((cell) => fitLine(cell, width / 2 - 6));
}

function applyZoom() {
  // the frame's width and most of the window's height; on the diagram's own page the
  // window's height below the frame's top
  let fit = Math.min(1, frame.clientWidth / natural.width,
    (0.85 * window.innerHeight) / natural.height);
  if (document.body.classList.contains("diagram")) {
    const room = window.innerHeight - (frame.getBoundingClientRect().top + window.scrollY) - 24;
    fit = Math.min(fit, Math.max(room, 240) / natural.height);
  }
  const scale = zoom === null ? fit : zoom;
  svg.style.width = `${Math.floor(natural.width * scale)}px`;
  svg.style.height = `${Math.floor(natural.height * scale)}px`;
  svg.classList.toggle("zoomed", zoom !== null);
  document.getElementById("zoom-level").textContent = `${Math.round(scale * 100)}%`;
  frame.dataset.scale = String(scale);
}

function zoomBy(factor) {
  const now = Number(frame.dataset.scale) || 1;
  zoom = Math.min(3, Math.max(0.2, now * factor));
  applyZoom();
}

document.getElementById("zoom-in").addEventListener("click", () => zoomBy(1.25));
document.getElementById("zoom-out").addEventListener("click", () => zoomBy(0.8));
document.getElementById("zoom-fit").addEventListener("click", () => { zoom = null; applyZoom(); });
window.addEventListener("resize", () => { if (zoom === null) applyZoom(); });
// drag the background to pan a zoomed diagram (the frame scrolls)
let drag = null;
svg.addEventListener("pointerdown", (e) => {
  if (e.target.closest("g.node")) return;
  drag = { x: e.clientX, y: e.clientY, left: frame.scrollLeft, top: frame.scrollTop };
});
window.addEventListener("pointermove", (e) => {
  if (!drag) return;
  frame.scrollLeft = drag.left - (e.clientX - drag.x);
  frame.scrollTop = drag.top - (e.clientY - drag.y);
});
window.addEventListener("pointerup", () => { drag = null; });

function showDetails(id) {
  const node = nodes[id];
  const panel = document.getElementById("details");
  panel.replaceChildren(element("h2", node.title), element("p", node.tag, "hint"));
  const list = element("dl");
  const add = (term, value, pre) => {
    if (value === null || value === undefined || value === "" ||
        (Array.isArray(value) && !value.length)) return;
    list.append(element("dt", term));
    const dd = element("dd");
    dd.append(pre ? element("pre", value) : document.createTextNode(value));
    list.append(dd);
  };
  add("As written", node.text, true);
  if (!node.text) node.details.forEach((d, i) => add(i ? "" : "Settings", d));
  const numbers = snapshot && snapshot.nodes[id];
  if (numbers) {
    for (const [name, value] of Object.entries(numbers)) {
      add(name, name === "together" ? `counted with ${value}` : fmt(value));
    }
  }
  panel.append(list);
  if (node.operators.length) {
    panel.append(element("h2", "Operators that run it"));
    for (const op of node.operators.map((o) => operators[o])) {
      const item = element("dl", null, "operator");
      item.dataset.operator = op.operator;
      panel.append(element("h3", op.title), item);
      const addTo = (term, value, pre) => {
        if (!value) return;
        item.append(element("dt", term));
        const dd = element("dd");
        dd.append(pre ? element("pre", value) : document.createTextNode(value));
        item.append(dd);
      };
      addTo("Plan", op.plan, true);
      addTo("Watermark", op.watermark, true);
      addTo("Runs on", op.runsOn);
      addTo("Shared by", op.sharedBy.length ? `${op.sharedBy.join(", ")}: runs once` : "");
      if (op.boxes.length > 1) {
        addTo("Also in", op.boxes.filter((b) => b !== id).map((b) => nodes[b].title).join(", "));
      }
    }
  }
  panel.dataset.selected = id;
}

function select(id) {
  document.querySelectorAll("g.node.selected").forEach((g) => g.classList.remove("selected"));
  const g = document.querySelector(`g.node[data-id="${id}"]`);
  if (g) g.classList.add("selected");
  selected = id;
  showDetails(id);
}

document.querySelectorAll("g.node").forEach((g) => {
  g.addEventListener("click", () => select(g.dataset.id));
  g.addEventListener("keydown", (e) => { if (e.key === "Enter") select(g.dataset.id); });
  fitBox(g);
});
applyZoom();

const METRIC_ATTRIBUTES = {
  "Read Events": "read", "Accepted Events": "accepted", "Dropped Events": "dropped",
  "Malformed Events": "malformed", "Late Input Events": "late",
  "Early Input Events": "early", "Out-of-Order Events": "ooo", "Output Events": "rows",
};

function showBoxNumbers(s) {
  document.querySelectorAll("g.node").forEach((g) => {
    const numbers = s.nodes[g.dataset.id];
    const text = g.querySelector("text.numbers");
    if (!text) return;
    const rows = numbersText(nodes[g.dataset.id], numbers);
    const left = Number(text.getAttribute("x"));
    const half = (Number(g.querySelector("rect").getAttribute("width")) - 2 * INSET) / 2;
    text.replaceChildren(...rows.flatMap((row, r) => row.map((cell, c) => {
      const span = document.createElementNS("http://www.w3.org/2000/svg", "tspan");
      span.setAttribute("x", String(left + c * half));
      span.setAttribute("dy", r && !c ? "15" : "0");
      span.textContent = cell;
      return span;
    })));
    fitBox(g);
    for (const [metric, attribute] of Object.entries(METRIC_ATTRIBUTES)) {
      if (numbers && numbers[metric] !== undefined) g.setAttribute(`data-${attribute}`, numbers[metric]);
    }
  });
}
