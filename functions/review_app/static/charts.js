// Small SVG charts, drawn with DOM calls (no markup strings). Each is an image with a text
// alternative that says what it shows, so the numbers reach people who cannot see it.

import {num, s} from "./dom.js";

// The count of scores 1-5 as five bars.
export function histogram(counts, label) {
  const width = 260;
  const height = 120;
  const top = 16;
  const bottom = 22;
  const most = Math.max(1, ...counts);
  const slot = width / counts.length;
  const total = counts.reduce((a, b) => a + b, 0);
  const said = counts.map((count, i) => `${i + 1}: ${count}`).join(", ");
  const chart = s("svg", {
    class: "chart",
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `${label}: how many of ${total} pairs got each score. ${said}.`,
  });
  counts.forEach((count, i) => {
    const barHeight = ((height - top - bottom) * count) / most;
    const x = i * slot + 6;
    const y = height - bottom - barHeight;
    chart.append(
      s("rect", {class: "bar", x, y, width: slot - 12, height: Math.max(barHeight, count ? 1 : 0)}),
      s("text", {class: "count", x: x + (slot - 12) / 2, y: y - 4, "text-anchor": "middle"}, String(count)),
      s("text", {class: "axis", x: x + (slot - 12) / 2, y: height - 6, "text-anchor": "middle"}, String(i + 1)),
    );
  });
  return chart;
}

// A mean and its interval on the 1-5 scale.
export function intervalBar(mean, low, high, label) {
  const width = 260;
  const height = 34;
  const pad = 12;
  const at = (value) => pad + ((Math.min(5, Math.max(1, value)) - 1) / 4) * (width - 2 * pad);
  const chart = s("svg", {
    class: "chart interval",
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `${label}: mean ${num(mean)}, 95% interval ${num(low)} to ${num(high)}, on a scale of 1 to 5.`,
  });
  chart.append(s("line", {class: "scale", x1: pad, x2: width - pad, y1: 12, y2: 12}));
  for (let tick = 1; tick <= 5; tick += 1) {
    chart.append(
      s("line", {class: "tick", x1: at(tick), x2: at(tick), y1: 8, y2: 16}),
      s("text", {class: "axis", x: at(tick), y: 30, "text-anchor": "middle"}, String(tick)),
    );
  }
  if (low !== null && high !== null && low !== undefined && high !== undefined) {
    chart.append(s("line", {class: "ci", x1: at(low), x2: at(high), y1: 12, y2: 12}));
  }
  if (mean !== null && mean !== undefined) {
    chart.append(s("circle", {class: "mean", cx: at(mean), cy: 12, r: 5}));
  }
  return chart;
}
