// asaql's job page: the numbers of a run (totals, the state, the latest malformed and late
// records) and their updates. The page's data is in #asaql-data; a live page ("live" mode)
// asks /api/status for new numbers every second, a report carries its final numbers.
const TOTALS = [
  ["Read Events", "read"], ["Accepted Events", "accepted"], ["Dropped Events", "dropped"],
  ["Malformed Events", "malformed"], ["Late Input Events", "late"],
  ["Early Input Events", "early"], ["Out-of-Order Events", "out of order"],
  ["Output Events", "output rows"], ["Runtime Errors", "data errors"],
];
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
  const back = s.holdingBack;
  document.getElementById("holding-back").textContent = !back ? ""
    : back.scope === "substream"
      ? `The substream furthest behind: ${back.partition} of ${back.query} (at ${back.watermark}).`
      : `The combined watermark waits for partition ${back.partition} of ${back.query} (at ${back.watermark}).`;
  fillRecords("malformed", s.malformed, (r) => [
    r.file ? `${r.file}:${r.line}`
      : (r.topic !== undefined ? `${r.topic} partition ${r.partition}, offset ${r.offset}` : ""),
    r.reason, typeof r.record === "string" ? r.record : JSON.stringify(r.record)]);
  fillRecords("late", s.late, (r) => [r.at, r.partition, r.eventTime, r.arrival, r.query]);
  if (selected) showDetails(selected);
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
