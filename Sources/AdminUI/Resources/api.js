// Calls to the node's REST API (same origin: the admin listener serves the UI).

/** The result of a call: HTTP status, ok flag, parsed JSON (or text) body. */
export async function api(method, path, body, options = {}) {
  const init = { method, headers: { Accept: "application/json" } };
  if (body !== undefined) {
    if (typeof body === "string" || body instanceof Blob) {
      init.body = body;
      init.headers["Content-Type"] = options.contentType || "application/javascript";
    } else {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (error) {
    return { status: 0, ok: false, json: { error: "unreachable", reason: `the node did not answer (${error.message})` } };
  }
  const type = response.headers.get("Content-Type") || "";
  let json = null;
  let text = null;
  if (type.includes("json")) {
    try { json = await response.json(); } catch { json = null; }
  } else {
    text = await response.text();
  }
  return { status: response.status, ok: response.ok, json, text };
}

/** A readable error line from a failed call. */
export function reason(result) {
  if (result.json && (result.json.reason || result.json.error)) {
    return `${result.status || ""} ${result.json.error || ""}: ${result.json.reason || ""}`.trim();
  }
  return `${result.status} ${result.text || ""}`.trim();
}

/** `/db/…` with every segment percent-encoded. */
export function path(...segments) {
  return "/" + segments.map(segment => encodeURIComponent(segment)).join("/");
}
