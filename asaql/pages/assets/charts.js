// The run's charts (plotly.js, inside the page): rates, watermarks, delay, micro-batches, lag.
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

