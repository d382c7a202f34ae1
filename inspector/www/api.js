/* The daemon's public API as the page uses it. Every call carries the
   bearer token when the tab has one; a 401 asks for it (once, however many
   calls were waiting) and retries. Paths are relative to the daemon's root,
   found from the page's own address, so a proxy prefix keeps working. */
(function () {
  "use strict";
  const TOKEN_KEY = "collisiond.token";
  const root = new URL("../", window.location.href);
  let askToken = null; // (wrong: bool) => Promise<string>, set by the UI
  let pending = null;  // the prompt every 401 waits on

  function token() {
    return window.sessionStorage.getItem(TOKEN_KEY);
  }

  /* One prompt for all the calls that were refused together. */
  function newToken(wrong) {
    if (!pending)
      pending = askToken(wrong).then((t) => {
        window.sessionStorage.setItem(TOKEN_KEY, t);
        pending = null;
        return t;
      });
    return pending;
  }

  function parse(text) {
    try {
      return JSON.parse(text);
    } catch (e) {
      return text;
    }
  }

  /* method, path ("v1/worlds"), optional JSON body: the decoded answer,
     or an Error with .status and .problem (the problem+json body). */
  async function call(method, path, body) {
    for (;;) {
      const sent = token();
      const headers = {};
      if (sent)
        headers.Authorization = "Bearer " + sent;
      if (body !== undefined)
        headers["Content-Type"] = "application/json";
      const r = await fetch(new URL(path, root), {
        method, headers, cache: "no-store",
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      if (r.status === 401 && askToken) {
        await newToken(sent !== null);
        continue;
      }
      const value = parse(await r.text());
      if (!r.ok) {
        const err = new Error(value && value.detail ? value.detail : r.status + " on " + path);
        err.status = r.status;
        err.problem = value;
        throw err;
      }
      return value;
    }
  }

  function worldPath(world, rest) {
    return "v1/worlds/" + encodeURIComponent(world) + (rest || "");
  }

  window.CQI = window.CQI || {};
  window.CQI.api = {
    onToken(fn) { askToken = fn; },
    get: (path) => call("GET", path),
    post: (path, body) => call("POST", path, body),
    worlds: () => call("GET", "v1/worlds"),
    world: (w) => call("GET", worldPath(w)),
    exportWorld: (w) => call("GET", worldPath(w, "/export")),
    pairs: (w) => call("GET", worldPath(w, "/pairs")),
    contacts: (w, body) => call("POST", worldPath(w, "/contacts"), body),
    raycast: (w, body) => call("POST", worldPath(w, "/raycast"), body),
    overlap: (w, body) => call("POST", worldPath(w, "/overlap"), body),
    sweep: (w, body) => call("POST", worldPath(w, "/sweep"), body),
    pair: (body) => call("POST", "v1/pair", body),
    fallbacks: () => call("GET", "metrics/fallbacks?limit=100"),
  };
}());
