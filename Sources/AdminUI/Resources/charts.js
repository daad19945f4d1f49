// Line charts in SVG for the metrics view.
import { h, s } from "./dom.js";

const WIDTH = 560;
const HEIGHT = 170;
const PAD = { left: 48, right: 12, top: 12, bottom: 24 };

function niceMax(value) {
  if (value <= 0) return 1;
  const power = Math.pow(10, Math.floor(Math.log10(value)));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function label(value) {
  if (value >= 1e6) return `${(value / 1e6).toFixed(1)}M`;
  if (value >= 1e3) return `${(value / 1e3).toFixed(1)}k`;
  return value >= 10 || value === 0 ? `${Math.round(value)}` : value.toFixed(2);
}

/**
 * A chart card: `series` is [{label, color, points: [[timeMs, value], …]}], drawn over
 * the last `windowSeconds`.
 */
export function lineChart(title, unit, series, maxSeconds = 300) {
  const now = Date.now();
  // The window grows with the samples the page has: one minute at first, at most `maxSeconds`.
  const first = Math.min(now, ...series.flatMap(line => line.points.map(([time]) => time)));
  const windowSeconds = Math.min(maxSeconds, Math.max(60, Math.ceil((now - first) / 60000) * 60));
  const from = now - windowSeconds * 1000;
  const all = series.flatMap(line => line.points.filter(([time]) => time >= from).map(([, value]) => value));
  const top = niceMax(Math.max(0, ...all));
  const x = time => PAD.left + ((time - from) / (now - from)) * (WIDTH - PAD.left - PAD.right);
  const y = value => HEIGHT - PAD.bottom - (value / top) * (HEIGHT - PAD.top - PAD.bottom);
  const grid = [0, 0.5, 1].map(fraction => [
    s("line", { x1: PAD.left, x2: WIDTH - PAD.right, y1: y(top * fraction), y2: y(top * fraction), class: "grid" }),
    s("text", { x: PAD.left - 6, y: y(top * fraction) + 4, class: "axis", "text-anchor": "end" }, label(top * fraction)),
  ]);
  const ticks = [windowSeconds, windowSeconds / 2, 0].map(secondsAgo => s("text", {
    x: x(now - secondsAgo * 1000), y: HEIGHT - 6, class: "axis",
    "text-anchor": secondsAgo === windowSeconds ? "start" : secondsAgo === 0 ? "end" : "middle",
  }, secondsAgo === 0 ? "now" : secondsAgo < 120 ? `-${Math.round(secondsAgo)} s` : `-${Math.round(secondsAgo / 60)} min`));
  const lines = series.map(line => {
    const points = line.points.filter(([time]) => time >= from);
    if (points.length < 2) return null;
    return s("polyline", {
      points: points.map(([time, value]) => `${x(time).toFixed(1)},${y(value).toFixed(1)}`).join(" "),
      fill: "none", stroke: line.color, "stroke-width": 2, "stroke-linejoin": "round",
    });
  });
  const latest = series.map(line => {
    const last = line.points[line.points.length - 1];
    return h("span", { class: "legend" }, h("i", { style: `background:${line.color}` }),
      `${line.label}: ${last ? label(last[1]) : "–"} ${unit}`);
  });
  return h("section", { class: "card chart" },
    h("h3", {}, title),
    s("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": title }, grid, ticks, lines),
    h("div", { class: "legends" }, latest));
}

/** Per-second rates between successive samples of a counter. */
export function rates(samples, name) {
  const points = [];
  for (let index = 1; index < samples.length; index++) {
    const before = samples[index - 1];
    const after = samples[index];
    const seconds = (after.time - before.time) / 1000;
    if (seconds <= 0 || before.values[name] === undefined || after.values[name] === undefined) continue;
    points.push([after.time, Math.max(0, (after.values[name] - before.values[name]) / seconds)]);
  }
  return points;
}

/** Mean of `sum`/`count` counters over each sample interval (e.g. latency). */
export function means(samples, sum, count, scale = 1) {
  const points = [];
  for (let index = 1; index < samples.length; index++) {
    const before = samples[index - 1].values;
    const after = samples[index].values;
    const calls = (after[count] || 0) - (before[count] || 0);
    const total = (after[sum] || 0) - (before[sum] || 0);
    points.push([samples[index].time, calls > 0 ? (total / calls) * scale : 0]);
  }
  return points;
}
