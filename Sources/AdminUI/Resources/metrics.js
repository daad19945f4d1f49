// Changes and metrics: the database's live changes feed (an EventSource on
// `_changes?feed=eventsource`) and charts of the node's own metrics over the last
// minutes (the `/_metrics` numbers, pushed every second by the event stream).
import { h, mount, note } from "./dom.js";
import { api, path } from "./api.js";
import { live, subscribe } from "./live.js";
import { lineChart, rates, means } from "./charts.js";

export async function render({ main, db, href }) {
  const charts = h("div", { class: "cols-2", id: "metric-charts" });
  const feed = h("ul", { class: "feed", id: "changes-feed" });
  const feedState = h("span", { class: "muted small" }, "connecting…");
  mount(main, h("h2", {}, `Changes and metrics (${db})`), charts,
    h("section", { class: "card" }, h("div", { class: "toolbar" }, h("h3", { style: "margin:0" }, "Live changes"), feedState), feed));

  const draw = () => {
    const samples = live.samples;
    if (samples.length < 2) { mount(charts, note("info", "Collecting samples: the charts start after two seconds.")); return; }
    mount(charts,
      lineChart("HTTP requests", "/s", [{ label: "requests", color: "#1f6feb", points: rates(samples, "shoal_http_requests_total") }]),
      lineChart("Request latency (mean)", "ms", [{ label: "latency", color: "#8250df",
        points: means(samples, "shoal_http_request_duration_seconds_sum", "shoal_http_request_duration_seconds_count", 1000) }]),
      lineChart("Replicated documents", "/s", [
        { label: "in", color: "#2da44e", points: rates(samples, "shoal_replication_docs_in_total") },
        { label: "out", color: "#d4a72c", points: rates(samples, "shoal_replication_docs_out_total") }]),
      lineChart("Conflicts resolved", "/s", [{ label: "resolved", color: "#cf222e", points: rates(samples, "shoal_conflicts_resolved_total") }]));
  };

  const info = await api("GET", path(db) + "/");
  const since = info.ok ? Math.max(0, info.json.update_seq - 20) : 0;
  const source = new EventSource(`${path(db, "_changes")}?feed=eventsource&since=${since}&heartbeat=15000&include_docs=false`);
  source.onopen = () => { feedState.textContent = "following"; };
  source.onerror = () => { feedState.textContent = "reconnecting…"; };
  source.onmessage = event => {
    const change = JSON.parse(event.data);
    feed.prepend(h("li", {}, h("code", {}, `#${change.seq}`), " ",
      h("a", { href: href("documents", db, change.id), "data-link": true }, change.id), " ",
      h("span", { class: "muted" }, (change.changes || []).map(entry => entry.rev).join(", ")),
      change.deleted ? h("span", { class: "badge" }, "deleted") : ""));
    while (feed.children.length > 200) feed.lastChild.remove();
  };
  const leave = () => source.close();
  window.addEventListener("pagehide", leave);
  draw();
  const stop = subscribe(draw);
  return () => { stop(); source.close(); window.removeEventListener("pagehide", leave); };
}
