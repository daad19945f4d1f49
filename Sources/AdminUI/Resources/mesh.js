// The mesh view: every node this node knows (its peers and what they reported about
// theirs) drawn as a graph, with each link's direction, state, lag and traffic, whether
// it is in step or behind (what is pending each way), and the details of the node clicked.
import { h, s, mount, ago, bytes, duration, shortID, facts, note } from "./dom.js";
import { live, subscribe } from "./live.js";

const WIDTH = 900;
const HEIGHT = 440;
const RADIUS = 26;
let selected = null;

/** The previous sample of each link's counters, for rates (per second). */
const samples = new Map();

/** Docs and bytes per second over a link since the last status that listed it. */
function rates(peer) {
  const key = `${peer.node_id || peer.address}|${peer.role}`;
  const now = performance.now();
  const counters = [peer.docs_pushed, peer.docs_pulled, peer.bytes_sent, peer.bytes_received].map(n => Number(n) || 0);
  const previous = samples.get(key);
  if (!previous || now - previous.time > 250) samples.set(key, { time: now, counters, rates: previous?.rates });
  if (!previous) return null;
  if (now - previous.time <= 250) return previous.rates || null;
  const seconds = (now - previous.time) / 1000;
  const result = counters.map((value, index) => Math.max(0, value - previous.counters[index]) / seconds);
  samples.get(key).rates = result;
  return result;
}

function perSecond(value, unit) {
  if (value === undefined || value === null) return "–";
  return unit === "B" ? `${bytes(Math.round(value))}/s` : `${value < 10 ? value.toFixed(1) : Math.round(value)}/s`;
}

/** "in step", or what is pending each way (documents), from `_peers`' fields. */
export function stepText(peer) {
  if (peer.in_step) return "in step";
  const send = peer.pending_send ? peer.pending_send.documents : "?";
  const receive = peer.pending_receive ? peer.pending_receive.documents : "?";
  return `behind: send ${send} docs / receive ${receive} docs`;
}

/** The pending counts in full (sequences and documents, each way). */
function pendingText(peer) {
  const side = backlog => backlog ? `${backlog.documents} docs (${backlog.sequences} seq)` : "not known";
  return `to send ${side(peer.pending_send)}, to receive ${side(peer.pending_receive)}${peer.idle ? "" : " · transferring"}`;
}

function linkState(peer) {
  if (peer.state === "connected" || peer.state === "running" || peer.state === "idle") return "connected";
  if (peer.state === "reconnecting" || peer.state === "starting") return "reconnecting";
  return "down";
}

/** Nodes and links of one mesh group as seen from this node. */
export function graph(status, group) {
  const self = status.node_id;
  const nodes = new Map([[self, { id: self, kind: "self" }]]);
  const links = [];
  const direct = new Map();
  for (const peer of group.peers) {
    const id = peer.node_id || peer.address;
    const state = linkState(peer);
    const previous = direct.get(id);
    // A peer linked both ways for a moment shows one link: the connected one.
    if (previous && (previous.state === "connected" || state !== "connected")) continue;
    direct.set(id, { peer, state });
  }
  for (const [id, { peer, state }] of direct) {
    // A connected link is drawn in step or behind (something pending either way).
    const behind = state === "connected" && !peer.in_step;
    nodes.set(id, { id, kind: "peer", peer, down: state !== "connected", behind });
    links.push({ from: peer.role === "accept" ? id : self, to: peer.role === "accept" ? self : id, state, behind, peer });
  }
  const seen = new Set(links.map(link => [link.from, link.to].sort().join("|")));
  for (const [reporter, peers] of Object.entries(group.peers_of_peers || {})) {
    // The last report of a peer whose link is down is stale: its links are not drawn.
    if (direct.has(reporter) && direct.get(reporter).state !== "connected") continue;
    if (!nodes.has(reporter)) nodes.set(reporter, { id: reporter, kind: "remote" });
    for (const other of peers) {
      if (!nodes.has(other)) nodes.set(other, { id: other, kind: "remote" });
      const key = [reporter, other].sort().join("|");
      if (seen.has(key)) continue;
      seen.add(key);
      links.push({ from: reporter, to: other, state: "reported" });
    }
  }
  return { nodes: [...nodes.values()], links };
}

/** Points spread over an arc (angles in degrees, y grows downwards). */
function arc(count, from, to) {
  if (count === 1) return [(from + to) / 2];
  return Array.from({ length: count }, (_, index) => from + ((to - from) * index) / (count - 1));
}

/**
 * This node near the top; its peers on an arc below it, nodes known only from
 * reports on an arc above, so that no link between two other nodes runs through it.
 * Beyond eight of either, a full circle.
 */
function layout(nodes) {
  const positions = new Map();
  const center = { x: WIDTH / 2, y: HEIGHT * 0.4 };
  positions.set(nodes[0].id, center);
  const place = (group, from, to, radius) => {
    const angles = group.length > 8 ? arc(group.length + 1, 0, 360).slice(0, -1) : arc(group.length, from, to);
    group.forEach((node, index) => {
      const angle = (angles[index] * Math.PI) / 180;
      positions.set(node.id, { x: center.x + radius * 2.2 * Math.cos(angle), y: center.y + radius * Math.sin(angle) });
    });
  };
  place(nodes.filter(node => node.kind === "peer"), 150, 30, 160);
  place(nodes.filter(node => node.kind === "remote"), 200, 340, 130);
  return positions;
}

function drawGraph(status, group, onSelect) {
  const { nodes, links } = graph(status, group);
  const at = layout(nodes);
  const edges = links.map(link => {
    const a = at.get(link.from);
    const b = at.get(link.to);
    const length = Math.hypot(b.x - a.x, b.y - a.y) || 1;
    const ux = (b.x - a.x) / length;
    const uy = (b.y - a.y) / length;
    const line = s("line", {
      x1: a.x + ux * RADIUS, y1: a.y + uy * RADIUS, x2: b.x - ux * (RADIUS + 4), y2: b.y - uy * (RADIUS + 4),
      class: `mesh-link ${link.state}${link.behind ? " behind" : link.state === "connected" ? " in-step" : ""}`,
      "data-from": link.from, "data-to": link.to, "data-state": link.state,
      "data-step": link.peer ? (link.peer.in_step ? "in-step" : "behind") : null,
      "marker-end": link.state === "reported" ? null : "url(#arrow)",
    }, s("title", {}, link.state === "reported" ? `${shortID(link.from)} reported a link to ${shortID(link.to)}`
      : `${shortID(link.from)} dials ${shortID(link.to)}: ${link.peer.state}, ${stepText(link.peer)}\n${pendingText(link.peer)}`));
    if (!link.peer) return line;
    const peer = link.peer;
    const label = link.state === "connected"
      ? `${peer.in_step ? "in step" : `behind ↑${peer.pending_send?.documents ?? "?"} ↓${peer.pending_receive?.documents ?? "?"}`}`
        + ` · ↑${perSecond(rates(peer)?.[0])} ↓${perSecond(rates(peer)?.[1])} docs`
      : `${peer.state}${peer.last_heard_seconds_ago !== undefined ? ` · heard ${ago(peer.last_heard_seconds_ago)}` : ""}`;
    return [line, s("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 8, class: "link-label", "text-anchor": "middle" }, label)];
  });
  const circles = nodes.map(node => {
    const { x, y } = at.get(node.id);
    const sub = node.kind === "self" ? "this node"
      : node.kind === "remote" ? "reported by a peer"
      : node.down ? `away · heard ${ago(node.peer.last_heard_seconds_ago)}`
      : `${node.behind ? "behind" : "in step"} · heard ${ago(node.peer.last_heard_seconds_ago)}`;
    return s("g", {
      class: `mesh-node ${node.kind}${node.down ? " down" : ""}${node.behind ? " behind" : ""}${selected === node.id ? " selected" : ""}`,
      "data-node-id": node.id, onclick: () => onSelect(node.id), tabindex: 0,
    },
      s("circle", { cx: x, cy: y, r: RADIUS }),
      s("text", { x, y: y + RADIUS + 16, "text-anchor": "middle" }, shortID(node.id)),
      s("text", { x, y: y + RADIUS + 30, "text-anchor": "middle", class: "sub" }, sub),
      s("title", {}, node.peer ? `${node.id}\n${stepText(node.peer)}\n${pendingText(node.peer)}` : node.id));
  });
  return s("svg", { class: "mesh-svg", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img", "aria-label": "Mesh graph" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      s("path", { d: "M0,0 L10,5 L0,10 z", fill: "#57606a" }))),
    edges, circles);
}

/** The faults the nemesis injected into this node (docs/operations.md "The nemesis"),
 *  shown above the graph so that nobody takes them for real ones. */
function nemesisBanner(status) {
  const faults = (status.nemesis && status.nemesis.faults) || [];
  if (!faults.length) return null;
  return note("error", h("div", { id: "mesh-nemesis" },
    h("strong", {}, `Injected faults (the nemesis): ${faults.length} in effect — not real ones`),
    h("ul", {}, faults.map(fault => h("li", { "data-fault": fault.fault }, faultText(fault))))));
}

function faultText(fault) {
  const on = fault.peers ? ` of ${fault.peers.map(shortID).join(", ")}`
    : fault.databases ? ` of ${fault.databases.join(", ")}` : "";
  const how = {
    partition: ` (${fault.direction})`, delay: ` ${fault.ms} ms ± ${fault.jitter_ms} ms`,
    loss: ` ${fault.percent}%`, clock: ` ${fault.offset_ms} ms`,
  }[fault.fault] || "";
  return `#${fault.id} ${fault.fault}${on}${how}: lifts by itself in ${duration(fault.remaining || 0)}`;
}

function details(status, group) {
  if (!selected || selected === status.node_id) {
    const node = status.node || {};
    return [h("h3", {}, "This node"), facts([
      ["Node ID", h("code", {}, status.node_id)],
      ["Version", node.version],
      ["Public", node.addresses && node.addresses.public],
      ["Admin", node.addresses && node.addresses.admin],
      ["Databases", (node.databases || []).join(", ")],
      ["Uptime", node.uptime_seconds !== undefined ? duration(node.uptime_seconds) : "–"],
      ["Memory (RSS)", bytes(node.rss_bytes)],
      ["Discovery", status.discovery],
      ["Nemesis", !(status.nemesis && status.nemesis.enabled) ? "off"
        : `on: ${(status.nemesis.faults || []).length} faults in effect, ${Object.values(status.nemesis.applied || {}).reduce((a, b) => a + b, 0)} injected since the start`],
      ["Mesh group", `${group.group} (max ${group.max_peers} peers)`],
    ])];
  }
  const peers = group.peers.filter(peer => (peer.node_id || peer.address) === selected);
  const reported = (group.peers_of_peers || {})[selected];
  if (!peers.length) {
    return [h("h3", {}, "Reported node"), facts([["Node ID", h("code", {}, selected)],
      ["Known from", "a peer's report of its links"]])];
  }
  return [h("h3", {}, "Peer"), peers.map(peer => facts([
    ["Node ID", h("code", {}, peer.node_id || "not identified yet")],
    ["Address", peer.address || "(it dialed us)"],
    ["Found by", peer.source],
    ["Link", peer.role === "accept" ? "it dials this node" : `this node dials it${peer.role === "fallback-dial" ? " (fallback)" : ""}`],
    ["State", h("span", { class: `state ${peer.state}` }, peer.state)],
    ["Connected since", peer.connected_since || "–"],
    ["Last heard", ago(peer.last_heard_seconds_ago)],
    ["In step", h("span", { class: `step ${peer.in_step ? "in-step" : "behind"}` }, stepText(peer))],
    ["Pending", pendingText(peer)],
    ["Lag", peer.sequences_behind !== undefined ? `${peer.sequences_behind} sequences` : "not known"],
    ["Docs", `pushed ${peer.docs_pushed}, pulled ${peer.docs_pulled}`],
    ["Throughput", `↑ ${perSecond(rates(peer)?.[0])} docs, ↓ ${perSecond(rates(peer)?.[1])} docs; `
      + `sent ${perSecond(rates(peer)?.[2], "B")}, received ${perSecond(rates(peer)?.[3], "B")}`],
    ["Traffic", `sent ${bytes(peer.bytes_sent)}, received ${bytes(peer.bytes_received)}`],
    ["Its peers", reported ? reported.map(shortID).join(", ") || "none" : "not reported"],
    ["Last error", peer.last_error || "–"],
  ]))];
}

export function render({ main, db }) {
  const graphCard = h("section", { class: "card grow", id: "mesh-graph" });
  const side = h("section", { class: "card", id: "mesh-details", style: "width:380px" });
  const table = h("section", { class: "card", id: "mesh-links" });
  mount(main, h("h2", {}, "Mesh"), h("div", { class: "row" }, graphCard, side), table);
  const update = () => {
    const status = live.status && live.status.mesh;
    if (!status) {
      mount(graphCard, h("p", { class: "muted" }, live.connected ? "Waiting for the node's status…" : "Connecting to the node…"));
      return;
    }
    const group = status.meshes.find(candidate => candidate.database === db) || status.meshes[0];
    if (!group) {
      mount(graphCard, h("p", { class: "muted" }, "No database of this node takes part in a mesh."));
      mount(side, ...details(status, { peers: [], group: "–" }));
      return;
    }
    mount(graphCard,
      nemesisBanner(status),
      h("div", { class: "toolbar" }, h("strong", {}, `Group “${group.group}” (database ${group.database})`),
        h("span", { class: "muted" }, `${group.peers_connected} of ${group.peers.length} links up`),
        h("span", { class: `step ${group.in_step ? "in-step" : "behind"}` }, group.in_step ? "in step with every peer" : "not in step")),
      drawGraph(status, group, id => { selected = id; update(); }),
      h("div", {},
        h("span", { class: "legend" }, h("i", { style: "background:#2da44e" }), "connected, in step (arrow: who dialed)"),
        h("span", { class: "legend" }, h("i", { style: "background:#8250df" }), "connected, behind (changes pending)"),
        h("span", { class: "legend" }, h("i", { style: "background:#d4a72c" }), "backing off"),
        h("span", { class: "legend" }, h("i", { style: "background:#cf222e" }), "down / partitioned"),
        h("span", { class: "legend" }, h("i", { style: "background:#aab4c0" }), "reported by a peer")));
    mount(side, ...details(status, group));
    mount(table, h("h3", {}, "Links"), h("table", {},
      h("tr", {}, ["Peer", "Link", "State", "Step", "Last heard", "To send", "To receive", "Pushed", "Pulled", "Sent", "Received"].map((title, index) => h("th", { class: index > 4 ? "num" : null }, title))),
      group.peers.map(peer => h("tr", { class: selected === (peer.node_id || peer.address) ? "selected" : null },
        h("td", {}, h("code", { title: peer.node_id || "" }, shortID(peer.node_id || peer.address)), " ", h("span", { class: "muted small" }, peer.address || "")),
        h("td", {}, peer.role === "accept" ? "← it dials" : "→ we dial"),
        h("td", {}, h("span", { class: `state ${peer.state}` }, peer.state)),
        h("td", {}, h("span", { class: `step ${peer.in_step ? "in-step" : "behind"}` }, peer.in_step ? "in step" : "behind")),
        h("td", {}, ago(peer.last_heard_seconds_ago)),
        h("td", { class: "num" }, peer.pending_send ? peer.pending_send.documents : "–"),
        h("td", { class: "num" }, peer.pending_receive ? peer.pending_receive.documents : "?"),
        h("td", { class: "num" }, peer.docs_pushed), h("td", { class: "num" }, peer.docs_pulled),
        h("td", { class: "num" }, bytes(peer.bytes_sent)), h("td", { class: "num" }, bytes(peer.bytes_received))))));
  };
  update();
  return subscribe(update);
}
