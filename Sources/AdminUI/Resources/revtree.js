// A document's revision tree as an SVG graph: one column per generation, one row per
// branch; the winner filled, leaves outlined thick, tombstones red, revisions whose
// body is no longer stored dashed; where each revision came from (`origin`, recorded
// by this node) as a coloured label: written here, by which node's resolver, or
// received from which peer.
import { h, s, shortID } from "./dom.js";

const COLUMN = 132;
const ROW = 64;

/** What an origin says, short: "resolver · 1a2b3c4d (this node)", "from 9f0c1d2e", "local". */
export function originLabel(origin, selfID) {
  if (!origin) return "";
  const node = origin.node ? shortID(origin.node) + (origin.node === selfID ? " (this node)" : "") : null;
  if (origin.kind === "resolver") return `resolver · ${node || "?"}`;
  if (origin.kind === "peer") return `from ${node || origin.detail || "a client"}`;
  return "local";
}

/** The legend for the origin colours (shown under the tree). */
export function originLegend() {
  const swatch = (kind, text) => h("span", { class: "origin-key" },
    h("span", { class: `origin-swatch origin-${kind}` }), text);
  return h("div", { class: "small muted", id: "origin-legend" }, "Where each revision came from, as this node saw it: ",
    swatch("resolver", "written by a node's conflict resolver (its ID)"),
    swatch("peer", "received by replication (the peer's ID)"),
    swatch("local", "written through this node's API"));
}

/**
 * `tree`: [{rev, parent, deleted, body, seq, origin?}], `winner`: the winning revision
 * ID, `selfID`: this node's ID (its own resolver is "this node").
 */
export function revisionTree(tree, winner, onSelect, selfID) {
  const byRev = new Map(tree.map(node => [node.rev, { ...node, children: [] }]));
  const roots = [];
  for (const node of byRev.values()) {
    const parent = node.parent && byRev.get(node.parent);
    if (parent) parent.children.push(node); else roots.push(node);
  }
  const generation = rev => parseInt(rev, 10) || 0;
  const order = (a, b) => {
    // The winner's branch first, then by generation and ID (stable, as every node sees it).
    const winnerSide = node => (containsWinner(node) ? 0 : 1);
    return winnerSide(a) - winnerSide(b) || generation(b.rev) - generation(a.rev) || a.rev.localeCompare(b.rev);
  };
  const containsWinner = node => node.rev === winner || node.children.some(containsWinner);
  const minGeneration = Math.min(...tree.map(node => generation(node.rev)));
  let nextRow = 0;
  const placed = [];
  const place = (node, row) => {
    node.row = row;
    node.column = generation(node.rev) - minGeneration;
    placed.push(node);
    node.children.sort(order).forEach((child, index) => place(child, index === 0 ? row : ++nextRow));
  };
  roots.sort(order).forEach((root, index) => place(root, index === 0 ? nextRow : ++nextRow));
  const leaves = new Set(placed.filter(node => node.children.length === 0).map(node => node.rev));
  // Room right of the last column for its captions (the origin label is the longest).
  const width = Math.max(...placed.map(node => node.column)) * COLUMN + 260;
  const height = (nextRow + 1) * ROW + 30;
  const x = node => 40 + node.column * COLUMN;
  const y = node => 30 + node.row * ROW;
  const edges = placed.filter(node => node.parent && byRev.get(node.parent)).map(node => {
    const parent = byRev.get(node.parent);
    const path = parent.row === node.row
      ? `M${x(parent)},${y(parent)} L${x(node)},${y(node)}`
      : `M${x(parent)},${y(parent)} C${x(parent) + COLUMN / 2},${y(parent)} ${x(node) - COLUMN / 2},${y(node)} ${x(node)},${y(node)}`;
    return s("path", { d: path, class: "rev-edge" });
  });
  const nodes = placed.map(node => {
    const classes = ["rev", node.body ? "body" : "nobody"];
    if (node.deleted) classes.push("deleted");
    if (leaves.has(node.rev)) classes.push("leaf");
    if (node.rev === winner) classes.push("winner");
    const caption = `${generation(node.rev)}-${shortID(node.rev.split("-")[1] || "").slice(0, 6)}`;
    const tags = [node.rev === winner ? "winner" : null, leaves.has(node.rev) && node.rev !== winner ? (node.deleted ? "tombstone" : "leaf") : null,
      !leaves.has(node.rev) && node.deleted ? "deleted" : null, node.body ? null : "no body"].filter(Boolean).join(" · ");
    const origin = node.origin;
    const label = originLabel(origin, selfID);
    const where = origin ? ` · ${origin.kind}${origin.node ? " " + origin.node : ""}${origin.detail ? " (" + origin.detail + ")" : ""}` : "";
    return s("g", {
      class: classes.join(" "), "data-rev": node.rev, "data-origin": origin ? origin.kind : null,
      "data-origin-node": origin && origin.node ? origin.node : null,
      onclick: () => onSelect && onSelect(node.rev), style: "cursor:pointer",
    },
      s("circle", { cx: x(node), cy: y(node), r: 9 }),
      s("text", { x: x(node) + 13, y: y(node) - 4 }, caption),
      s("text", { x: x(node) + 13, y: y(node) + 11, class: "muted", style: "fill:#5d6b80;font-size:10px" }, tags),
      label ? s("text", { x: x(node) + 13, y: y(node) + 24, class: `rev-origin origin-${origin.kind}` }, label) : null,
      s("title", {}, `${node.rev}${node.deleted ? " (deleted)" : ""}${node.body ? "" : " (body not stored)"} · seq ${node.seq}${where}`));
  });
  return s("svg", { class: "revtree", viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": "Revision tree" },
    edges, nodes);
}
