// Replications: the configured ones (Sync Gateway's `_replication`) and the mesh's
// links, each with its status, progress and errors; stop and start again
// (`PUT /{db}/_replicationStatus/{id}?action=stop|start`).
import { h, mount, note } from "./dom.js";
import { api, reason, path } from "./api.js";
import { live, subscribe } from "./live.js";

function progress(done, total) {
  const fraction = total > 0 ? Math.min(1, done / total) : (done > 0 ? 1 : 0);
  return h("div", { class: "progress", title: `${done} of ${total}` }, h("div", { style: `width:${Math.round(fraction * 100)}%` }));
}

function row(id, kind, status, actions) {
  const pushed = status.docs_pushed || 0;
  const pulled = status.docs_pulled || 0;
  return h("tr", { "data-replication": id },
    h("td", {}, h("code", {}, id), h("div", { class: "muted small" }, kind)),
    h("td", {}, h("span", { class: `state ${status.status || status.state}` }, status.status || status.state)),
    h("td", {}, `pushed ${pushed} of ${status.docs_checked_push ?? pushed} checked`, progress(pushed, status.docs_checked_push ?? pushed)),
    h("td", {}, `pulled ${pulled} of ${status.docs_checked_pull ?? pulled} checked`, progress(pulled, status.docs_checked_pull ?? pulled)),
    h("td", { class: "small" }, status.error_message || status.last_error || ""),
    h("td", {}, actions));
}

export async function render({ main, db }) {
  const message = h("div");
  const table = h("section", { class: "card", id: "replication-list" });
  mount(main, h("h2", {}, `Replications of ${db}`), message, table);
  const act = async (id, action) => {
    const result = await api("PUT", `${path(db, "_replicationStatus", id)}?action=${action}`);
    mount(message, result.ok ? note("ok", `${id}: ${action === "stop" ? "stopped" : "started"}.`) : note("error", reason(result)));
  };

  const update = () => {
    const status = live.status && live.status.databases.find(entry => entry.name === db);
    const mesh = live.status && live.status.mesh && live.status.mesh.meshes.find(group => group.database === db);
    const configured = Object.entries((status && status.replications) || {});
    mount(table,
      h("table", {},
        h("tr", {}, ["Replication", "State", "Push", "Pull", "Error", ""].map(title => h("th", {}, title))),
        configured.map(([id, replication]) => row(id, "configured", replication, replication.status === "stopped"
          ? h("button", { class: "primary", onclick: () => act(id, "start") }, "Start")
          : h("button", { onclick: () => act(id, "stop") }, "Stop"))),
        ((mesh && mesh.peers) || []).map(peer => row(`mesh ${peer.node_id ? peer.node_id.slice(0, 8) : peer.address}`,
          `mesh link (${peer.role === "accept" ? "it dials us" : "we dial"})`, peer, h("span", { class: "muted small" }, "managed by the mesh")))),
      configured.length || (mesh && mesh.peers.length) ? "" : h("p", { class: "muted" }, "No replication."));
  };
  update();
  return subscribe(update);
}
