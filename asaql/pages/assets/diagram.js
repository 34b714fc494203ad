// The job diagram: the selection, a box's details and the run's numbers on each box.
const METRIC_ATTRIBUTES = {
  "Read Events": "read", "Accepted Events": "accepted", "Dropped Events": "dropped",
  "Malformed Events": "malformed", "Late Input Events": "late",
  "Early Input Events": "early", "Out-of-Order Events": "ooo", "Output Events": "rows",
};

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

function showBoxNumbers(s) {
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
}
