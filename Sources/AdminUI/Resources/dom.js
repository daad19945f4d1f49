// Small DOM helpers shared by the views: element builders and formatters.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(element, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) element.addEventListener(key.slice(2), value);
    else if (key === "text") element.textContent = value;
    else element.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

/** An HTML element: h("div", {class: "x", onclick: f}, "text", child…). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replaces the children of `element`. */
export function mount(element, ...children) {
  element.replaceChildren();
  build(element, {}, children);
  return element;
}

/** "3 s ago", "2 min ago", "1 h ago" for a number of seconds. */
export function ago(seconds) {
  if (seconds === undefined || seconds === null) return "never";
  if (seconds < 1.5) return "now";
  return `${duration(seconds)} ago`;
}

/** "42 s", "3 min", "2 h 5 min", "4 d". */
export function duration(seconds) {
  seconds = Math.round(seconds);
  if (seconds < 90) return `${seconds} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172800) return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
  return `${Math.round(seconds / 86400)} d`;
}

/** "812 B", "4.2 KB", "1.5 MB". */
export function bytes(count) {
  if (count === undefined || count === null) return "–";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = count;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++; }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** The first characters of a node ID (full ID in a tooltip). */
export function shortID(id) {
  return id ? (id.length > 8 ? id.slice(0, 8) : id) : "?";
}

/** A labelled field: h("label") wrapping a caption and a control. */
export function field(caption, control) {
  return h("label", { class: "field" }, h("span", {}, caption), control);
}

/** A message box: kind is "ok", "error" or "info". */
export function note(kind, ...content) {
  return h("div", { class: `note ${kind}`, role: kind === "error" ? "alert" : "status" }, ...content);
}

/** A key/value table from [[key, value], …]. */
export function facts(rows) {
  return h("dl", { class: "facts" }, rows.map(([key, value]) => [h("dt", {}, key), h("dd", {}, value)]));
}

/** Pretty JSON text. */
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}
