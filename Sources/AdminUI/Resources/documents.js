// Databases and documents: the document list (ID prefix search, paging), one
// document's JSON (edit, save, delete), its attachments and its revision tree.
import { h, mount, note, facts, pretty, bytes } from "./dom.js";
import { api, reason, path } from "./api.js";
import { revisionTree, originLegend } from "./revtree.js";
import { live } from "./live.js";

const PAGE = 20;

export async function render(context) {
  if (context.rest.length) return renderDocument(context, context.rest.join("/"));
  return renderList(context);
}

async function renderList({ main, db, params, navigate, href }) {
  const prefix = params.get("prefix") || "";
  const page = Math.max(0, parseInt(params.get("page") || "0", 10) || 0);
  const search = h("input", { type: "search", placeholder: "Document ID prefix", value: prefix, id: "doc-prefix", style: "width:280px" });
  const go = (newPrefix, newPage) => {
    const query = new URLSearchParams();
    if (newPrefix) query.set("prefix", newPrefix);
    if (newPage) query.set("page", String(newPage));
    navigate(`${href("documents", db)}${query.size ? "?" + query : ""}`);
  };
  search.addEventListener("keydown", event => { if (event.key === "Enter") go(search.value, 0); });
  const newID = h("input", { placeholder: "New document ID", id: "new-doc-id" });
  const list = h("section", { class: "card" }, "Loading…");
  const info = await api("GET", path(db) + "/");
  mount(main,
    h("h2", {}, `Documents in ${db}`),
    info.ok ? h("p", { class: "muted" }, `${info.json.doc_count} documents · update sequence ${info.json.update_seq}`) : note("error", reason(info)),
    h("div", { class: "toolbar" }, search, h("button", { onclick: () => go(search.value, 0) }, "Search"),
      h("span", { style: "flex:1" }), newID,
      h("button", { class: "primary", onclick: () => newID.value && navigate(href("documents", db, newID.value) + "?new=1") }, "New document")),
    list);
  let query = `?limit=${PAGE + 1}&skip=${page * PAGE}`;
  if (prefix) query += `&startkey=${encodeURIComponent(JSON.stringify(prefix))}&endkey=${encodeURIComponent(JSON.stringify(prefix + "\ufff0"))}`;
  const result = await api("GET", `${path(db, "_all_docs")}${query}`);
  if (!result.ok) { mount(list, note("error", reason(result))); return; }
  const rows = result.json.rows.slice(0, PAGE);
  mount(list,
    rows.length ? h("table", { id: "doc-list" },
      h("tr", {}, h("th", {}, "ID"), h("th", {}, "Current revision"), h("th", {}, "")),
      rows.map(row => h("tr", {},
        h("td", {}, h("a", { href: href("documents", db, row.id), "data-link": true }, row.id)),
        h("td", {}, h("code", {}, row.value.rev)),
        h("td", {}, row.value.deleted ? h("span", { class: "badge" }, "deleted") : "")))) : h("p", { class: "muted" }, "No documents" + (prefix ? ` starting with “${prefix}”` : "") + "."),
    h("div", { class: "toolbar", style: "margin-top:10px" },
      h("button", { disabled: page === 0, onclick: () => go(prefix, page - 1) }, "← Previous"),
      h("span", { class: "muted" }, `Page ${page + 1}`),
      h("button", { disabled: result.json.rows.length <= PAGE, onclick: () => go(prefix, page + 1) }, "Next →")));
}

async function renderDocument({ main, db, params, navigate, href }, id) {
  const docPath = path(db, ...id.split("/"));
  const current = await api("GET", `${docPath}?conflicts=true`);
  const raw = await api("GET", path(db, "_raw", id));
  const isNew = current.status === 404 && params.get("new");
  if (!current.ok && !isNew && !(raw.ok && raw.json._deleted)) {
    mount(main, h("h2", {}, id), note("error", reason(current)));
    return;
  }
  const body = current.ok ? current.json : { _id: id, ...(raw.ok ? { _rev: raw.json._rev } : {}) };
  const editor = h("textarea", { class: "code", id: "doc-json", spellcheck: "false", style: "min-height:200px" }, pretty(body));
  const message = h("div", { id: "doc-message" });
  const reload = () => navigate(href("documents", db, id));
  const save = async () => {
    let parsed;
    try { parsed = JSON.parse(editor.value); } catch (error) { mount(message, note("error", `Not valid JSON: ${error.message}`)); return; }
    const result = await api("PUT", docPath, parsed);
    if (result.ok) reload(); else mount(message, note("error", reason(result)));
  };
  const remove = async () => {
    if (!body._rev || !confirm(`Delete ${id}?`)) return;
    const result = await api("DELETE", `${docPath}?rev=${encodeURIComponent(body._rev)}`);
    if (result.ok) reload(); else mount(message, note("error", reason(result)));
  };
  const revisionView = h("pre", { class: "mono", id: "rev-body", style: "white-space:pre-wrap;max-height:240px;overflow:auto" });
  const showRevision = async rev => {
    const result = await api("GET", `${docPath}?rev=${encodeURIComponent(rev)}`);
    mount(revisionView, result.ok ? `${rev}\n${pretty(result.json)}` : `${rev}: ${reason(result)}`);
  };
  const sync = raw.ok ? raw.json._sync : null;
  const conflicts = body._conflicts || [];
  mount(main,
    h("div", { class: "toolbar" }, h("a", { href: href("documents", db), "data-link": true }, `← ${db}`)),
    h("h2", {}, id, raw.ok && raw.json._deleted ? h("span", { class: "badge" }, "deleted") : "",
      conflicts.length ? h("span", { class: "badge", style: "background:#fff1cc;color:#6b4e00" }, `${conflicts.length + 1} live leaves`) : ""),
    h("div", { class: "row" },
      h("section", { class: "card grow" }, h("h3", {}, "JSON"), editor,
        h("div", { class: "toolbar", style: "margin-top:8px" },
          h("button", { class: "primary", id: "doc-save", onclick: save }, "Save"),
          h("button", { class: "danger", id: "doc-delete", onclick: remove, disabled: !current.ok }, "Delete"),
          h("span", { class: "muted small" }, "Saving sends the _rev shown: a stale one is refused with 409.")),
        message),
      h("section", { class: "card", style: "width:420px" }, h("h3", {}, "Metadata"),
        sync ? facts([
          ["Winner", h("code", {}, sync.rev)],
          ["Sequence", sync.sequence],
          ["Leaves", sync.leaves.length],
          ["Channels", Object.keys(sync.channels || {}).join(", ") || "none"],
          ["Access grants", sync.access ? Object.entries(sync.access).map(([who, channels]) => `${who}: ${channels.join(", ")}`).join("; ") : "none"],
        ]) : h("p", { class: "muted" }, "Not stored yet."),
        attachments(db, id, docPath, body, message, reload))),
    sync ? h("section", { class: "card", id: "rev-tree" }, h("h3", {}, "Revision tree"),
      h("p", { class: "muted small" }, "Filled blue: the winner · thick outline: leaves · red: tombstones · dashed: body not stored. Click a revision to see its body."),
      revisionTree(sync.tree || [], sync.rev, showRevision, live.hello && live.hello.node_id), originLegend(), revisionView) : "");
}

function attachments(db, id, docPath, body, message, reload) {
  const entries = Object.entries(body._attachments || {});
  const file = h("input", { type: "file", id: "attachment-file" });
  const upload = async () => {
    const chosen = file.files[0];
    if (!chosen || !body._rev) return;
    const result = await api("PUT", `${docPath}/${encodeURIComponent(chosen.name)}?rev=${encodeURIComponent(body._rev)}`, chosen,
      { contentType: chosen.type || "application/octet-stream" });
    if (result.ok) reload(); else mount(message, note("error", reason(result)));
  };
  return h("div", { style: "margin-top:12px" }, h("h3", {}, "Attachments"),
    entries.length ? h("table", {}, entries.map(([name, info]) => h("tr", {},
      h("td", {}, h("a", { href: `${docPath}/${encodeURIComponent(name)}`, download: name }, name)),
      h("td", { class: "muted small" }, info.content_type || ""),
      h("td", { class: "num" }, bytes(info.length))))) : h("p", { class: "muted small" }, "None."),
    h("div", { class: "toolbar", style: "margin-top:6px" }, file, h("button", { onclick: upload, disabled: !body._rev }, "Upload")));
}
