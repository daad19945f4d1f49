// The sync function: an editor with the function in effect, Deploy (PUT
// /{db}/_config/sync, which compiles it, stores it and resyncs), the resync's progress
// as the node's event stream reports it (`resync` of the database's status), and a
// test panel that runs a function on a sample document and user without writing anything.
import { h, mount, note, field, facts, pretty, duration } from "./dom.js";
import { api, reason, path } from "./api.js";
import { live, subscribe } from "./live.js";

const SAMPLE = { _id: "sample", type: "task", owner: "user1", channels: ["public"] };

export async function render({ main, db }) {
  const config = await api("GET", path(db, "_config"));
  const source = await api("GET", path(db, "_config", "sync"));
  const editor = h("textarea", { class: "code", id: "sync-editor", spellcheck: "false", style: "min-height:340px" }, source.text || "");
  const result = h("div", { id: "sync-result" });
  const ORIGINS = { admin_api: "deployed through the admin API (wins over the config file until the file's function changes)",
    config_file: "from the config file", default: "Sync Gateway's default (no function configured)" };
  const origin = config.ok ? config.json.sync_origin : "unknown";
  const originLine = h("span", { class: "muted", id: "sync-origin" }, `In effect: ${ORIGINS[origin] || origin}.`);
  const resetButton = h("button", { disabled: origin !== "admin_api" }, "Back to the config file's");
  const showOrigin = value => {
    originLine.textContent = `In effect: ${ORIGINS[value] || value}.`;
    resetButton.disabled = value !== "admin_api";
  };

  const progress = h("div", { id: "resync-progress" });
  const TRIGGERS = { config: "after a deploy", request: "POST _resync", start: "at start: the function had changed" };
  const showProgress = () => {
    const database = live.status && live.status.databases.find(entry => entry.name === db);
    const resync = database && database.resync;
    if (!resync) { mount(progress); return; }
    const total = Math.max(resync.docs_total, resync.docs_processed);
    const percent = total ? Math.round(100 * resync.docs_processed / total) : 100;
    const elapsed = ((resync.end_time ? Date.parse(resync.end_time) : Date.now()) - Date.parse(resync.start_time)) / 1000;
    const state = { running: "running", completed: "completed", error: "failed" }[resync.status] || resync.status;
    mount(progress,
      h("div", { class: "toolbar small", style: "margin-top:10px" },
        h("strong", {}, `Resync ${state}`),
        h("span", { class: "muted" }, `#${resync.run} · ${TRIGGERS[resync.trigger] || resync.trigger} · ${elapsed < 1 ? `${Math.round(elapsed * 1000)} ms` : duration(elapsed)}`)),
      h("div", { class: "progress", role: "progressbar", "aria-valuenow": percent, "aria-valuemin": 0, "aria-valuemax": 100 },
        h("div", { style: `width:${percent}%${resync.status === "error" ? ";background:#cf222e" : ""}` })),
      h("div", { class: "small", "data-status": resync.status, id: "resync-counts" },
        `${resync.docs_processed} of ${total} documents processed · ${resync.docs_changed} changed`,
        resync.last_error ? h("span", { class: "muted" }, ` · ${resync.last_error}`) : ""));
  };
  const stop = subscribe(showProgress);

  const deploy = async () => {
    mount(result, note("info", "Compiling, storing and resyncing (progress below)…"));
    const started = performance.now();
    const answer = await api("PUT", path(db, "_config", "sync"), editor.value);
    if (!answer.ok) { mount(result, note("error", `Not deployed: ${reason(answer)}`)); return; }
    const resync = answer.json.resync || {};
    showOrigin("admin_api");
    mount(result, note("ok", `Deployed. Resync recomputed the channels and grants of ${resync.processed} documents (${resync.changed} changed) in ${Math.round(performance.now() - started)} ms.`));
  };
  resetButton.addEventListener("click", () => reset());
  const reset = async () => {
    const answer = await api("DELETE", path(db, "_config", "sync"));
    if (!answer.ok) { mount(result, note("error", reason(answer))); return; }
    const fresh = await api("GET", path(db, "_config", "sync"));
    editor.value = fresh.text || "";
    const again = await api("GET", path(db, "_config"));
    showOrigin(again.ok ? again.json.sync_origin : "unknown");
    mount(result, note("ok", "Back to the config file's function (resynced)."));
  };

  const testDoc = h("textarea", { class: "code", id: "test-doc", spellcheck: "false", style: "min-height:120px" }, pretty(SAMPLE));
  const testOld = h("textarea", { class: "code", id: "test-old", spellcheck: "false", style: "min-height:60px", placeholder: "oldDoc (empty: a new document)" });
  const testUser = h("input", { id: "test-user", placeholder: "user name (empty: admin, every require… passes)" });
  const testResult = h("div", { id: "test-result" });
  const runTest = async () => {
    let doc;
    let oldDoc = null;
    try {
      doc = JSON.parse(testDoc.value);
      if (testOld.value.trim()) oldDoc = JSON.parse(testOld.value);
    } catch (error) { mount(testResult, note("error", `Not valid JSON: ${error.message}`)); return; }
    const answer = await api("POST", path(db, "_sync_test"), { doc, oldDoc, user: testUser.value.trim() || null, sync: editor.value });
    if (!answer.ok) { mount(testResult, note("error", reason(answer))); return; }
    const outcome = answer.json;
    if (!outcome.ok) { mount(testResult, note("error", `Rejected (${outcome.status}): ${outcome.reason}`)); return; }
    mount(testResult, note("ok", "Accepted"), facts([
      ["Channels", outcome.channels.join(", ") || "none"],
      ["Access", Object.entries(outcome.access).map(([who, channels]) => `${who} → ${channels.join(", ")}`).join("; ") || "none"],
      ["Roles", Object.entries(outcome.roles).map(([who, roles]) => `${who} → ${roles.join(", ")}`).join("; ") || "none"],
      ["Expiry", outcome.expiry !== undefined ? JSON.stringify(outcome.expiry) : "none"],
    ]));
  };

  mount(main,
    h("h2", {}, `Sync function of ${db}`),
    h("div", { class: "row" },
      h("section", { class: "card grow" },
        h("div", { class: "toolbar" }, originLine),
        editor,
        h("div", { class: "toolbar", style: "margin-top:8px" },
          h("button", { class: "primary", id: "sync-deploy", onclick: deploy }, "Deploy"),
          resetButton),
        result, progress),
      h("section", { class: "card", style: "width:440px" },
        h("h3", {}, "Test (writes nothing)"),
        h("p", { class: "muted small" }, "Runs the function in the editor on this document as this user."),
        field("doc", testDoc), field("oldDoc", testOld), field("user", testUser),
        h("button", { id: "test-run", onclick: runTest }, "Run test"), testResult)));
  showProgress();
  return stop;
}
