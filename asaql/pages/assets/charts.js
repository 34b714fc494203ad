// The run's charts (plotly.js, inside the page): rates, watermarks, their delay behind the
// newest arrival, micro-batches, topic lag. Each fits its box: plotly's automargin makes room
// for the ticks, axis titles and legend; the title sits at the left, where the toolbar (shown
// on hover, at the right) never covers it. The names come from the snapshot's labels
// (monitor.py): the page parses no key.
const CONFIG = {
  displaylogo: false, responsive: true, displayModeBar: "hover",
  modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d", "zoomIn2d", "zoomOut2d",
    "toggleSpikelines", "hoverClosestCartesian", "hoverCompareCartesian"],
};
const LEGEND = { orientation: "v", x: 1.02, xanchor: "left", y: 1, yanchor: "top" };

function layoutOf(title, extra) {
  const { xaxis, yaxis, ...rest } = extra || {};
  return {
    margin: { l: 8, r: 8, t: 34, b: 8, pad: 2 },  // the least: automargin adds what is needed
    font: { size: 11 },
    title: { text: title, x: 0, xref: "container", xanchor: "left", y: 1, yref: "container",
             yanchor: "top", pad: { l: 10, t: 10 }, font: { size: 13 } },
    legend: LEGEND,
    xaxis: { automargin: true, ...(xaxis || {}) },
    yaxis: { automargin: true, ...(yaxis || {}) },
    ...rest,
  };
}

function chart(id, title, traces, extra) {
  const div = document.getElementById(id);
  const empty = !traces.length || traces.every((t) => !t.x.length);
  div.classList.toggle("empty", empty);
  if (typeof Plotly === "undefined") return;
  if (empty) {
    if (div.data) Plotly.purge(div);
    return;
  }
  Plotly.react(div, traces, layoutOf(title, extra), CONFIG);
}

// A time chart with a single moment (one micro-batch, or several within a second) draws no
// line over a few milliseconds of wall clock: each series' last value, one bar (or one dot
// for a time) per series, the series' names down the side where long names have room.
function oneMoment(traces) {
  const times = traces.flatMap((t) => t.x).map((x) => Date.parse(x));
  return traces.every((t) => t.x.length <= 1) || Math.max(...times) - Math.min(...times) < 1000;
}

function lastValues(traces, asTimes) {
  const last = { y: traces.map((t) => t.name), x: traces.map((t) => t.y[t.y.length - 1]),
                 showlegend: false };
  return [asTimes ? { ...last, type: "scatter", mode: "markers", marker: { size: 10 } }
    : { ...last, type: "bar", orientation: "h" }];
}

// A time axis around times a few milliseconds apart: a second either side, not a range of
// fractions of a millisecond.
function aroundTimes(values) {
  const t = values.map((v) => Date.parse(v));
  const low = Math.min(...t), high = Math.max(...t);
  return high - low >= 2000 ? {} : { range: [new Date(low - 1000).toISOString(),
                                              new Date(high + 1000).toISOString()] };
}

// `extra.yaxis` is the values' axis: up the side over time, along the bottom at one moment
function timeChart(id, title, traces, extra, asTimes, moment = "one micro-batch") {
  const lines = traces.filter((t) => t.x.length);
  if (lines.length && oneMoment(lines)) {
    const points = lastValues(lines, asTimes);
    const values = { ...(extra.yaxis || {}), ...(asTimes ? aroundTimes(points[0].x) : {}) };
    chart(id, `${title} (${moment})`, points, { ...extra, xaxis: values,
      yaxis: { type: "category", autorange: "reversed" } });
    return;
  }
  chart(id, title, lines, { ...extra, xaxis: { type: "date" },
    showlegend: lines.length > 1 });
}

function showCharts(s) {
  const h = s.history;
  const labels = s.labels || {};
  const name = (query) => (labels[query] || {}).name || query;
  const several = new Set(h.filter((p) => p.watermark).map((p) => p.query)).size > 1;
  const rate = (key, label) => {
    const x = [], y = [];
    for (let i = 1; i < h.length; i++) {
      const dt = (Date.parse(h[i].time) - Date.parse(h[i - 1].time)) / 1000;
      if (dt > 0) { x.push(h[i].time); y.push((h[i][key] - h[i - 1][key]) / dt); }
    }
    return { x, y, name: label, mode: "lines+markers" };
  };
  timeChart("chart-rate", "Events per second", [rate("read", "input"), rate("output", "output")],
    { yaxis: { rangemode: "tozero" } }, false, "one interval");

  // each partition's or substream's watermark (the first 32), and each query's lowest
  const keys = new Map();
  h.forEach((p) => Object.keys(p.partitions || {}).forEach((k) => {
    const id = JSON.stringify([p.query, k]);
    if (!keys.has(id)) keys.set(id, { query: p.query, key: k });
  }));
  const labelOf = ({ query, key }) => ((labels[query] || {}).keys || {})[key] || key;
  const byName = [...keys.values()].sort((a, b) => labelOf(a).localeCompare(labelOf(b), "en",
    { numeric: true }));
  const marks = byName.slice(0, 32).map(({ query, key }) => {
    const x = [], y = [];
    h.forEach((p) => {
      const v = p.query === query && (p.partitions || {})[key];
      if (v) { x.push(p.time); y.push(v); }
    });
    return { x, y, name: labelOf({ query, key }), mode: "lines+markers" };
  });
  const queries = [...new Set(h.filter((p) => p.watermark).map((p) => p.query))];
  queries.forEach((query) => {
    const points = h.filter((p) => p.query === query && p.watermark);
    marks.push({ x: points.map((p) => p.time), y: points.map((p) => p.watermark),
                 name: several ? `${name(query)} · lowest` : "lowest", mode: "lines+markers",
                 line: { width: 3, dash: "dot" } });
  });
  timeChart("chart-watermarks", "Watermarks", marks, { yaxis: { type: "date" } }, true);

  // the watermark's delay behind the input's newest arrival: what a replay of old events
  // and a live stream both mean by "behind" (wall clock − watermark is days for the former)
  const delays = queries.map((query) => {
    const points = h.filter((p) => p.query === query && p.behind !== null && p.behind !== undefined);
    return { x: points.map((p) => p.time), y: points.map((p) => p.behind), name: name(query),
             mode: "lines+markers" };
  });
  timeChart("chart-delay", "Watermark delay", delays,
    { yaxis: { rangemode: "tozero", title: { text: "s behind the newest arrival" } } }, false);

  // one bar per micro-batch (its duration), and the state rows after it
  // several queries: `#3 · q2` (the query's number; its name on hover), short enough to read
  const byQuery = several || new Set(s.batches.map((b) => b.query)).size > 1;
  const batchOf = (p) => (byQuery ? `#${p.batch} · q${p.query.split(":").pop()}` : `#${p.batch}`);
  const states = h.filter((p) => p.stateRows !== null && p.stateRows !== undefined);
  const most = Math.max(0, ...states.map((p) => p.stateRows));  // a count: whole ticks
  chart("chart-batches", "Micro-batches", [
    { x: s.batches.map(batchOf), y: s.batches.map((p) => p.seconds), name: "duration (s)",
      type: "bar", text: s.batches.map((p) => name(p.query)), hoverinfo: "x+y+text",
      textposition: "none" },
    { x: states.map(batchOf), y: states.map((p) => p.stateRows), name: "state rows",
      mode: "lines+markers", yaxis: "y2", text: states.map((p) => name(p.query)),
      hoverinfo: "x+y+text" }],
  { showlegend: false, xaxis: { type: "category", title: { text: "micro-batch" } },
    yaxis: { rangemode: "tozero", title: { text: "duration (s)" } },
    yaxis2: { overlaying: "y", side: "right", rangemode: "tozero", automargin: true,
              title: { text: "state rows" }, tickformat: ",d",
              ...(most < 5 ? { range: [0, Math.max(1, most)], dtick: 1 } : {}) } });

  const lag = Object.entries(s.lag || {}).flatMap(([q, parts]) =>
    Object.entries(parts).map(([k, v]) => [((labels[q] || {}).topics || {})[k] || k, v]));
  chart("chart-lag", "Topic lag per partition",
    lag.length ? [{ x: lag.map((l) => l[0]), y: lag.map((l) => l[1]), type: "bar", name: "lag" }] : [],
    { showlegend: false, xaxis: { type: "category" },
      yaxis: { rangemode: "tozero", title: { text: "offsets behind the broker" } } });
}
