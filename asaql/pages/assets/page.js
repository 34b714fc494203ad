// asaql's job page: the selection on the diagram, the numbers on its boxes, the charts.
// The page's data is in #asaql-data; a live page ("live" mode) asks /api/status for new
// numbers every second, a report carries its final numbers.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("asaql-data").textContent);
  const nodes = Object.fromEntries(data.graph.nodes.map((n) => [n.id, n]));
  let snapshot = data.snapshot;
  let selected = null;
  const fmt = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
  const TOTALS = [
    ["Read Events", "read"], ["Accepted Events", "accepted"], ["Dropped Events", "dropped"],
    ["Malformed Events", "malformed"], ["Late Input Events", "late"],
    ["Early Input Events", "early"], ["Out-of-Order Events", "out of order"],
    ["Output Events", "output rows"], ["Runtime Errors", "data errors"],
  ];
  const METRIC_ATTRIBUTES = {
    "Read Events": "read", "Accepted Events": "accepted", "Dropped Events": "dropped",
    "Malformed Events": "malformed", "Late Input Events": "late",
    "Early Input Events": "early", "Out-of-Order Events": "ooo", "Output Events": "rows",
  };

  function element(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    return e;
  }

  function numbersText(node, numbers) {
    if (!numbers) return [];
    if (node.kind === "input") {
      const adjusted = (numbers["Late Input Events"] || 0) + (numbers["Early Input Events"] || 0)
        + (numbers["Out-of-Order Events"] || 0);
      return [`read ${fmt(numbers["Read Events"])} · accepted ${fmt(numbers["Accepted Events"])}`,
        `adjusted ${fmt(adjusted)} · dropped ${fmt(numbers["Dropped Events"])}`
        + ` · malformed ${fmt(numbers["Malformed Events"])}`];
    }
    if (node.kind === "output" || node.kind === "stage") return [`rows ${fmt(numbers["Output Events"])}`];
    return [`late ${fmt(numbers["Late Input Events"])} · early ${fmt(numbers["Early Input Events"])}`,
      `out of order ${fmt(numbers["Out-of-Order Events"])} · dropped ${fmt(numbers["Dropped Events"])}`];
  }

  function showDetails(id) {
    const node = nodes[id];
    const panel = document.getElementById("details");
    panel.replaceChildren(element("h2", node.title));
    const list = element("dl");
    const add = (term, value, pre) => {
      if (value === null || value === undefined || value === "" ||
          (Array.isArray(value) && !value.length)) return;
      list.append(element("dt", term));
      const dd = element("dd");
      dd.append(pre ? element("pre", value) : document.createTextNode(value));
      list.append(dd);
    };
    add("Plan", node.plan, true);
    add("Watermark", node.watermark, true);
    add("Runs on", node.runsOn);
    add("Shared by", node.sharedBy.join(", ") + (node.sharedBy.length ? ": runs once" : ""));
    node.details.forEach((d, i) => add(i ? "" : "Settings", d));
    const numbers = snapshot && snapshot.nodes[id];
    if (numbers) {
      for (const [name, value] of Object.entries(numbers)) {
        add(name, name === "together" ? `counted with ${value}` : fmt(value));
      }
    }
    panel.append(list);
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
  });

  function showNumbers(s) {
    document.querySelectorAll("g.node").forEach((g) => {
      const numbers = s.nodes[g.dataset.id];
      const text = g.querySelector("text.numbers");
      const lines = numbersText(nodes[g.dataset.id], numbers);
      text.replaceChildren(...lines.map((line, i) => {
        const span = document.createElementNS("http://www.w3.org/2000/svg", "tspan");
        span.setAttribute("x", text.getAttribute("x"));
        span.setAttribute("dy", i ? "14" : String(-14 * (lines.length - 1)));
        span.textContent = line;
        return span;
      }));
      for (const [metric, attribute] of Object.entries(METRIC_ATTRIBUTES)) {
        if (numbers && numbers[metric] !== undefined) g.setAttribute(`data-${attribute}`, numbers[metric]);
      }
    });
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

  const LAYOUT = { margin: { l: 60, r: 20, t: 36, b: 40 }, legend: { orientation: "h" },
                   font: { size: 11 } };
  const CONFIG = { displaylogo: false, responsive: true };

  function chart(id, title, traces, extra) {
    const div = document.getElementById(id);
    const empty = !traces.length || traces.every((t) => !t.x.length);
    div.classList.toggle("empty", empty);
    if (empty || typeof Plotly === "undefined") return;
    Plotly.react(div, traces, { ...LAYOUT, title: { text: title }, ...(extra || {}) }, CONFIG);
  }

  function showCharts(s) {
    const h = s.history;
    const rate = (key) => {
      const x = [], y = [];
      for (let i = 1; i < h.length; i++) {
        const dt = (Date.parse(h[i].time) - Date.parse(h[i - 1].time)) / 1000;
        if (dt > 0) { x.push(h[i].time); y.push((h[i][key] - h[i - 1][key]) / dt); }
      }
      return { x, y };
    };
    chart("chart-rate", "Events per second", [
      { ...rate("read"), name: "input", mode: "lines+markers" },
      { ...rate("output"), name: "output", mode: "lines+markers" }],
      { yaxis: { rangemode: "tozero" } });
    const keys = new Set();
    h.forEach((p) => Object.keys(p.partitions || {}).forEach((k) => keys.add(`${p.query} ${k}`)));
    const marks = [...keys].slice(0, 32).map((key) => {
      const x = [], y = [];
      h.forEach((p) => {
        for (const [k, v] of Object.entries(p.partitions || {})) {
          if (`${p.query} ${k}` === key && v) { x.push(p.time); y.push(v); }
        }
      });
      return { x, y, name: key, mode: "lines+markers" };
    });
    const combined = h.filter((p) => p.watermark);
    marks.push({ x: combined.map((p) => p.time), y: combined.map((p) => p.watermark),
                 name: "lowest", mode: "lines+markers", line: { width: 3, dash: "dot" } });
    chart("chart-watermarks", "Watermarks", marks, { yaxis: { type: "date" } });
    const delays = h.filter((p) => p.delay !== null && p.delay !== undefined);
    chart("chart-delay", "Watermark delay (s): wall clock − watermark", !s.live ? [] : [
      { x: delays.map((p) => p.time), y: delays.map((p) => p.delay), name: "delay", mode: "lines+markers" }]);
    const b = s.batches;
    const states = h.filter((p) => p.stateRows !== null && p.stateRows !== undefined);
    chart("chart-batches", "Micro-batches", [
      { x: b.map((p) => p.timestamp), y: b.map((p) => p.seconds), name: "duration (s)",
        mode: "lines+markers" },
      { x: states.map((p) => p.time), y: states.map((p) => p.stateRows), name: "state rows",
        mode: "lines+markers", yaxis: "y2" }],
      { yaxis: { rangemode: "tozero", title: { text: "seconds" } },
        yaxis2: { overlaying: "y", side: "right", rangemode: "tozero", title: { text: "rows" } } });
    const lag = Object.entries(s.lag || {}).flatMap(([q, parts]) =>
      Object.entries(parts).map(([k, v]) => [`${q} ${k}`, v]));
    chart("chart-lag", "Topic lag per partition (offsets behind the broker's end)",
      lag.length ? [{ x: lag.map((l) => l[0]), y: lag.map((l) => l[1]), type: "bar", name: "lag" }] : []);
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
})();
