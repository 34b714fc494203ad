// asaql's job page: the numbers of a run (its health: totals, rates, watermarks, late and
// malformed counts; the state; the latest malformed and late records) and their updates. The
// page's data is in #asaql-data; a live page ("live" mode) asks /api/status for new numbers
// every second, a report carries its final numbers.
const TOTALS = [
  ["Read Events", "read"], ["Accepted Events", "accepted"], ["Dropped Events", "dropped"],
  ["Malformed Events", "malformed"], ["Late Input Events", "late"],
  ["Early Input Events", "early"], ["Out-of-Order Events", "out of order"],
  ["Output Events", "output rows"], ["Runtime Errors", "data errors"],
];
const seconds = (t) => Date.parse(t) / 1000;
const perSecond = (n) => (n >= 100 ? fmt(Math.round(n)) : Number(n.toFixed(1)).toLocaleString("en-US"));

function showNumbers(s) {
  showBoxNumbers(s);
  const state = document.getElementById("state");
  state.className = `state ${s.state}`;
  state.textContent = `${s.state} · started ${s.started}` + (data.mode === "live" ? ` · updated ${s.now}` : "");
  document.getElementById("summary").textContent = s.summary || "";
  const body = document.querySelector("#totals tbody");
  body.replaceChildren(...TOTALS.map(([metric, label]) => {
    const row = element("tr");
    row.dataset.metric = metric;
    row.append(element("td", label), element("td", fmt(s.totals[metric]), "value"));
    return row;
  }));
  const [rate, how] = rates(s);
  document.getElementById("rates").replaceChildren(rate, element("br"), element("span", how, "hint"));
  showWatermarks(s);
  showProblems(s);
  fillRecords("malformed", s.malformed, (r) => [
    r.file ? `${r.file}:${r.line}`
      : (r.topic !== undefined ? `${r.topic} partition ${r.partition}, offset ${r.offset}` : ""),
    r.reason, typeof r.record === "string" ? r.record : JSON.stringify(r.record)]);
  fillRecords("late", s.late, (r) => [r.at, r.partition, r.eventTime, r.arrival,
    r.outcome === "adjusted" ? `adjusted to ≥ ${r.systemTimestamp} (arrival − ${r.tolerance})`
      : (r.outcome || ""), queryName(s, r.query)]);
  if (selected) showDetails(selected);
}

// In and out per second: a live run's latest micro-batch (0 when it has been idle for a
// while), a finished run's average from its start to its last micro-batch.
function rates(s) {
  const h = s.history;
  if (!h.length) return ["", ""];
  const last = h[h.length - 1];
  if (data.mode === "live" && h.length > 1) {
    const before = h[h.length - 2];
    const dt = seconds(last.time) - seconds(before.time);
    const idle = seconds(s.now) - seconds(last.time) > Math.max(10, 2 * dt);
    if (dt > 0) {
      const r = (key) => (idle ? 0 : (last[key] - before[key]) / dt);
      return [`in ${perSecond(r("read"))}/s · out ${perSecond(r("output"))}/s`,
        idle ? "idle: no micro-batch for a while" : "the latest micro-batch"];
    }
  }
  // from the first micro-batch's start (Spark's progress), not the session's start-up
  const first = (s.batches || []).map((b) => b.timestamp).filter(Boolean).sort()[0] || s.started;
  const dt = seconds(last.time) - seconds(first);
  if (!(dt > 0)) return ["", ""];
  return [`in ${perSecond(s.totals["Read Events"] / dt)}/s · out ${perSecond(s.totals["Output Events"] / dt)}/s`,
    `average over the micro-batches' ${dt.toFixed(1)} s`];
}

function queryName(s, query) {
  return ((s.labels || {})[query] || {}).name || query;
}

// Each partition's or substream's watermark, lowest first, with its delay behind the newest
// arrival; the one holding the combined watermark back is highlighted.
function showWatermarks(s) {
  const rows = [];
  for (const [query, mark] of Object.entries(s.watermarks || {})) {
    const keys = ((s.labels || {})[query] || {}).keys || {};
    const behind = mark.behindByKey || {};
    for (const [key, value] of Object.entries(mark.partitions || {})) {
      rows.push({ query, key, label: keys[key] || key, value,
                  behind: mark.ended ? "input ended" : behind[key] === undefined ? "" : `${inSeconds(behind[key])}` });
    }
    if (mark.substreams) rows.push({ query, key: "", label: `${fmt(mark.substreams)} substreams of ${queryName(s, query)}: too many to list`, value: "", behind: "" });
  }
  rows.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const back = s.holdingBack;
  document.getElementById("holding-back").textContent = !back ? ""
    : back.scope === "substream"
      ? `Furthest behind: ${back.label} (at ${back.watermark}).`
      : `Holding the combined watermark back: ${back.label} (at ${back.watermark}).`;
  const body = document.querySelector("#watermarks tbody");
  body.replaceChildren(...rows.map((r) => {
    const row = element("tr", null, back && back.query === r.query && back.partition === r.key ? "holding" : "");
    row.dataset.key = r.key;
    row.append(element("td", r.label), element("td", r.value), element("td", r.behind));
    return row;
  }));
}
const inSeconds = (n) => `${Number(n).toLocaleString("en-US", { maximumFractionDigits: 3 })} s`;

// The late and malformed counts, and how many of them the tables below list: the monitor
// keeps the first late event of each micro-batch and the latest malformed records (up to
// `s.listed` each), so the page says "1 of 12" rather than letting a list pass for all.
function showProblems(s) {
  const late = s.totals["Late Input Events"] || 0;
  const listed = (s.late || []).length;
  const count = document.getElementById("late-count");
  count.replaceChildren(`Late input events: `, element("span", fmt(late), "number"),
    late ? ` (${fmt(listed)} of ${fmt(late)} listed below: the first of each micro-batch)` : "",
    element("br"), [["early", "Early Input Events"], ["out of order", "Out-of-Order Events"],
      ["dropped", "Dropped Events"]].map(([l, m]) => `${l} ${fmt(s.totals[m])}`).join(" · "));
  document.getElementById("late-heading").textContent =
    `Late events: ${fmt(listed)} of ${fmt(late)} listed (the first of each micro-batch, the latest ${fmt(s.listed)})`;
  // the errors file holds the data errors too (rows a CAST failed on): listed together
  const malformed = s.totals["Malformed Events"] || 0;
  const failed = s.totals["Runtime Errors"] || 0;
  const shown = (s.malformed || []).length;
  const all = malformed + failed;
  document.getElementById("malformed-count").replaceChildren(`Malformed records: `,
    element("span", fmt(malformed), "number"), failed ? ` · data errors ${fmt(failed)}` : "",
    all ? ` (the latest ${fmt(shown)} of ${fmt(all)} listed below)` : "");
  document.getElementById("malformed-heading").textContent =
    `Latest malformed records${failed ? " and data errors" : ""}: ${fmt(shown)} of ${fmt(all)}`;
}

function fillRecords(id, records, cells) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren(...(records || []).map((r) => {
    const row = element("tr");
    cells(r).forEach((c, i) => row.append(element("td", c === undefined ? "" : c,
      id === "malformed" && i === 2 ? "record" : "")));
    return row;
  }));
}

function update(s) {
  snapshot = s;
  showNumbers(s);
  showCharts(s);
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}

if (snapshot) update(snapshot);
if (data.mode === "live") {
  const poll = () => fetch("api/status", { cache: "no-store" })
    .then((r) => r.json()).then(update).catch(() => {})
    .finally(() => setTimeout(poll, 1000));
  poll();
}
