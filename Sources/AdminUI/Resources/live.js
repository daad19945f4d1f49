// Follows the node through its Server-Sent Events stream (`/_admin/events`): the
// latest status (with each database's resync progress, also sent on its own as it
// changes), a few minutes of metric samples, and whether the node is away.
// EventSource reconnects by itself; a new start time in `hello` means the node
// restarted, and the page says how long it was away.

const HISTORY_SECONDS = 600;

export const live = {
  connected: false,
  hello: null,
  status: null,
  /** Metric samples: [{time, values: {name: total}}], oldest first. */
  samples: [],
  awaySince: null,
  lastAway: null,
  listeners: new Set(),
};

function notify() {
  for (const listener of live.listeners) {
    try { listener(live); } catch (error) { console.error(error); }
  }
}

/** Calls `listener` on every update; returns a function that stops it. */
export function subscribe(listener) {
  live.listeners.add(listener);
  return () => live.listeners.delete(listener);
}

/** Sums Prometheus text samples by metric name (all labels added together). */
export function parseMetrics(text) {
  const values = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const value = Number(match[3]);
    if (!Number.isFinite(value)) continue;
    values[match[1]] = (values[match[1]] || 0) + value;
  }
  return values;
}

/**
 * Opens the stream. It is closed when the page is left: a browser keeps at most six
 * HTTP/1.1 connections to one host, and a page kept in the back/forward cache would
 * otherwise hold its stream open.
 */
export function start() {
  let source = open();
  window.addEventListener("pagehide", () => source.close());
  window.addEventListener("pageshow", event => { if (event.persisted) source = open(); });
}

function open() {
  const source = new EventSource("/_admin/events");
  source.addEventListener("hello", event => {
    const hello = JSON.parse(event.data);
    const restarted = live.hello && live.hello.start_time !== hello.start_time;
    if (live.awaySince) {
      live.lastAway = { seconds: (Date.now() - live.awaySince) / 1000, restarted, at: Date.now() };
    } else if (restarted) {
      live.lastAway = { seconds: 0, restarted, at: Date.now() };
    }
    if (restarted) live.samples = [];
    live.hello = hello;
    live.connected = true;
    live.awaySince = null;
    notify();
  });
  source.addEventListener("history", event => {
    // The node's samples from before this page opened (or since it restarted).
    const history = JSON.parse(event.data).map(sample => ({ time: sample.t, values: sample.v }));
    const first = live.samples.length ? live.samples[0].time : Infinity;
    live.samples = history.filter(sample => sample.time < first).concat(live.samples);
  });
  source.addEventListener("status", event => {
    live.status = JSON.parse(event.data);
    live.connected = true;
    notify();
  });
  source.addEventListener("resync", event => {
    // Resync progress between status events: database → GET /{db}/_resync's answer.
    const resyncs = JSON.parse(event.data);
    for (const database of (live.status && live.status.databases) || []) {
      if (resyncs[database.name]) database.resync = resyncs[database.name];
    }
    notify();
  });
  source.addEventListener("metrics", event => {
    live.samples.push({ time: Date.now(), values: parseMetrics(event.data) });
    const cutoff = Date.now() - HISTORY_SECONDS * 1000;
    while (live.samples.length && live.samples[0].time < cutoff) live.samples.shift();
  });
  source.onerror = () => {
    if (live.connected) {
      live.connected = false;
      live.awaySince = Date.now();
      notify();
    }
  };
  return source;
}
