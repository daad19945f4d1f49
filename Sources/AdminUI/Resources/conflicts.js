// Conflicts: the policy per type, what the node's resolver did, the documents still
// in conflict, and resolving one with a chosen leaf (or the database's policy).
import { h, mount, note, facts, pretty } from "./dom.js";
import { api, reason, path } from "./api.js";
import { live, subscribe } from "./live.js";

export async function render({ main, db, href, navigate }) {
  const summary = h("section", { class: "card grow", id: "conflict-summary" });
  const list = h("section", { class: "card", id: "conflict-list" }, "Loading…");
  const message = h("div");
  mount(main, h("h2", {}, `Conflicts in ${db}`), h("div", { class: "row" }, summary), message, list);

  const showSummary = () => {
    const status = live.status && live.status.databases.find(entry => entry.name === db);
    if (!status || !status.policies) { mount(summary, h("p", { class: "muted" }, "No conflict resolution on this database.")); return; }
    const resolver = status.resolver;
    const types = Object.entries(status.policies.types);
    mount(summary, h("div", { class: "cols-2" },
      h("div", {}, h("h3", {}, "Policies"), facts([
        ["Default", h("code", {}, status.policies.default)],
        ...types.map(([type, policy]) => [`${status.policies.type_field} = ${type}`, h("code", {}, policy)]),
      ]), h("p", { class: "small" }, h("a", { href: href("sync", db), "data-link": true }, "Change them in the config API"), " (PUT /", db, "/_config/conflicts)")),
      h("div", {}, h("h3", {}, "Resolver on this node"), facts([
        ["Resolved", resolver.resolved], ["Revisions written", resolver.revisions_written],
        ["Kept (policy none)", resolver.kept], ["Failed", resolver.failed],
        ["Waiting for a merge base", resolver.waiting_for_merge_base],
      ]))));
  };

  const load = async () => {
    const result = await api("GET", `${path(db, "_conflicts")}?limit=200`);
    if (!result.ok) { mount(list, note("error", reason(result))); return; }
    const rows = result.json.rows;
    if (!rows.length) { mount(list, h("h3", {}, "Documents in conflict"), h("p", { class: "muted", id: "no-conflicts" }, "No document is in conflict.")); return; }
    const bodies = await Promise.all(rows.map(row => api("GET", `${path(db, row.id)}?open_revs=${encodeURIComponent(JSON.stringify([row.rev, ...row.conflicts]))}`)));
    mount(list, h("h3", {}, `Documents in conflict (${rows.length})`), rows.map((row, index) => {
      const leaves = [row.rev, ...row.conflicts];
      const opened = bodies[index].ok && Array.isArray(bodies[index].json) ? bodies[index].json : [];
      const bodyOf = rev => (opened.find(entry => entry.ok && entry.ok._rev === rev) || {}).ok;
      return h("div", { class: "card", "data-doc": row.id, style: "background:#fbfcfe" },
        h("div", { class: "toolbar" },
          h("a", { href: href("documents", db, row.id), "data-link": true }, h("strong", {}, row.id)),
          row.merge_base ? h("span", { class: "muted small" }, `merge base ${row.merge_base}`) : "",
          row.waiting_for_merge_base ? h("span", { class: "badge" }, "waiting for merge base") : "",
          h("span", { style: "flex:1" }),
          h("button", { onclick: () => resolve(row.id, {}) }, "Resolve with the policy")),
        h("div", { class: "cols-2" }, leaves.map(rev => h("div", {},
          h("div", { class: "toolbar" }, h("code", {}, rev), rev === row.rev ? h("span", { class: "badge winner" }, "winner") : "",
            h("button", { class: "primary", "data-keep": rev, onclick: () => resolve(row.id, { rev }) }, "Keep this leaf")),
          h("pre", { class: "mono", style: "max-height:160px;overflow:auto;margin:0" }, bodyOf(rev) ? pretty(bodyOf(rev)) : "(body not available)")))));
    }));
  };

  const resolve = async (id, body) => {
    const result = await api("POST", `${path(db, id, "_resolve")}`, body);
    mount(message, result.ok
      ? note("ok", `${id}: ${result.json.outcome}${result.json.rev ? ` → ${result.json.rev}` : ""} (${(result.json.revs || []).length} revisions written)`)
      : note("error", reason(result)));
    await load();
  };

  showSummary();
  const stop = subscribe(showSummary);
  await load();
  return stop;
}
