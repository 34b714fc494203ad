// The page's data and small helpers, shared by diagram.js, charts.js and page.js (page.py
// puts the four in one function, in that order: common, diagram, charts, page).
"use strict";
const data = JSON.parse(document.getElementById("asaql-data").textContent);
const nodes = Object.fromEntries(data.graph.nodes.map((n) => [n.id, n]));
let snapshot = data.snapshot;
let selected = null;
const fmt = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
function element(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

