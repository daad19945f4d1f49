// The admin UI's shell: the router (paths under /_admin/ name a view), the navigation,
// the node pill and the "node away" banner, all fed by the live event stream.
import { h, mount, shortID, duration } from "./dom.js";
import { api } from "./api.js";
import { live, start, subscribe } from "./live.js";
import * as mesh from "./mesh.js";
import * as documents from "./documents.js";
import * as conflicts from "./conflicts.js";
import * as sync from "./sync.js";
import * as users from "./users.js";
import * as replications from "./replications.js";
import * as metrics from "./metrics.js";

const PAGES = [
  { key: "mesh", title: "Mesh", view: mesh, global: true },
  { key: "documents", title: "Documents", view: documents },
  { key: "conflicts", title: "Conflicts", view: conflicts },
  { key: "sync", title: "Sync function", view: sync },
  { key: "users", title: "Users & roles", view: users },
  { key: "replications", title: "Replications", view: replications },
  { key: "metrics", title: "Changes & metrics", view: metrics },
];

const state = { databases: [], db: null, cleanup: null };

/** `/_admin/db/{db}/{page}/{rest…}` → {page, db, rest}. */
function parse(pathname) {
  const parts = pathname.replace(/^\/_admin\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] === "db" && parts[1]) {
    const page = parts[2] === "doc" ? "documents" : (parts[2] || "documents");
    return { page, db: parts[1], rest: parts[2] === "doc" ? parts.slice(3) : parts.slice(3) };
  }
  return { page: parts[0] || "mesh", db: null, rest: parts.slice(1) };
}

export function href(page, db, ...rest) {
  if (page === "mesh") return "/_admin/mesh";
  const base = `/_admin/db/${encodeURIComponent(db || state.db || "")}`;
  const tail = rest.map(encodeURIComponent).join("/");
  if (page === "documents") return rest.length ? `${base}/doc/${tail}` : base;
  return `${base}/${page}${tail ? "/" + tail : ""}`;
}

export function navigate(url) {
  history.pushState(null, "", url);
  route();
}

function renderNav(current) {
  mount(document.getElementById("nav"), PAGES.map(page => h("a", {
    href: page.global ? href("mesh") : href(page.key, state.db),
    "data-link": true, class: page.key === current ? "active" : null, id: `nav-${page.key}`,
  }, page.title)));
  const select = document.getElementById("db-select");
  mount(select, state.databases.map(name => h("option", { value: name, selected: name === state.db }, name)));
}

async function route() {
  const { page, db, rest } = parse(location.pathname);
  if (db) state.db = db;
  if (!state.db && state.databases.length) state.db = state.databases[0];
  const entry = PAGES.find(candidate => candidate.key === page) || PAGES[0];
  renderNav(entry.key);
  document.title = `${entry.title} · Shoal admin`;
  if (state.cleanup) { try { state.cleanup(); } catch (error) { console.error(error); } }
  state.cleanup = null;
  const main = document.getElementById("view");
  mount(main);
  if (!entry.global && !state.db) {
    mount(main, h("p", { class: "muted" }, "This node serves no database."));
    return;
  }
  const params = new URLSearchParams(location.search);
  try {
    state.cleanup = await entry.view.render({ main, db: state.db, rest, params, navigate, href }) || null;
  } catch (error) {
    console.error(error);
    mount(main, h("h2", {}, entry.title), h("div", { class: "note error" }, `This page failed: ${error.message}`));
  }
}

function renderLiveChrome() {
  const pill = document.getElementById("node-pill");
  const banner = document.getElementById("banner");
  const node = live.status && live.status.mesh && live.status.mesh.node;
  if (live.connected) {
    pill.className = "pill up";
    pill.textContent = node ? `node ${shortID(node.node_id)} · up ${duration(node.uptime_seconds)}` : "connected";
    pill.title = node ? node.node_id : "";
  } else if (live.awaySince) {
    pill.className = "pill down";
    pill.textContent = "node unreachable";
  }
  if (!live.connected && live.awaySince) {
    banner.hidden = false;
    banner.className = "away";
    banner.textContent = `The node is away since ${new Date(live.awaySince).toLocaleTimeString()} (${Math.round((Date.now() - live.awaySince) / 1000)} s); reconnecting…`;
  } else if (live.lastAway && Date.now() - live.lastAway.at < 60000) {
    banner.hidden = false;
    banner.className = "back";
    banner.textContent = `The node is back: it was away ${Math.round(live.lastAway.seconds)} s${live.lastAway.restarted ? " and restarted" : ""}.`;
  } else {
    banner.hidden = true;
  }
  const names = live.status ? live.status.databases.map(db => db.name) : null;
  if (names && names.join() !== state.databases.join()) {
    state.databases = names;
    if (!state.db) state.db = names[0];
    renderNav(parse(location.pathname).page);
  }
}

document.addEventListener("click", event => {
  const link = event.target.closest("a[data-link]");
  if (!link || event.ctrlKey || event.metaKey || event.button !== 0) return;
  event.preventDefault();
  navigate(link.getAttribute("href"));
});
window.addEventListener("popstate", route);
document.getElementById("db-select").addEventListener("change", event => {
  state.db = event.target.value;
  const { page } = parse(location.pathname);
  navigate(page === "mesh" ? href("mesh") : href(page, state.db));
});

async function boot() {
  const dbs = await api("GET", "/_all_dbs");
  if (dbs.ok) state.databases = dbs.json.sort();
  start();
  subscribe(renderLiveChrome);
  setInterval(renderLiveChrome, 1000);
  await route();
  window.shoalAdminReady = true;
}

boot();
