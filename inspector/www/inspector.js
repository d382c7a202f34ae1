/* The inspector page: one world drawn live, its overlays, the picker and
   the panels. It reads the public API only (docs/INSPECTOR.md), and
   exposes its own state as window.__inspector for tests and scripts. */
(function () {
  "use strict";
  const T = window.THREE;
  const {api, panels, ShapeLayer, Overlay} = window.CQI;
  const $ = panels.$;

  const view = $("view");
  const renderer = new T.WebGLRenderer({antialias: true});
  renderer.setPixelRatio(window.devicePixelRatio);
  view.appendChild(renderer.domElement);
  const scene = new T.Scene();
  scene.background = new T.Color(0x15171c);
  const camera = new T.PerspectiveCamera(50, 1, 0.01, 1e7);
  scene.add(camera);
  // A headlight: the faces turned to the viewer show their layer's colour.
  scene.add(new T.AmbientLight(0xffffff, 0.35));
  const head = new T.DirectionalLight(0xffffff, 0.65);
  camera.add(head);
  camera.add(head.target);
  head.target.position.set(0, 0, -1);
  const controls = new T.OrbitControls(camera, renderer.domElement);
  controls.screenSpacePanning = true;

  const shapes = new ShapeLayer(scene);
  const ov = {};
  for (const name of ["pairs", "contacts", "ccd", "rays", "query", "fallbacks", "pick"])
    ov[name] = new Overlay(scene, name);

  const state = {
    world: null, doc: null, info: null, loadMs: null, refreshes: 0, lastRefreshMs: null,
    done: [], frames: 0, picked: [], rays: [], busy: 0, scale: 1, reach: 10, live: 0, liveTimer: null, liveGeneration: 0,
    fallbackCount: 0, queryHits: [],
  };

  function render() {
    renderer.render(scene, camera);
    state.frames++;
  }
  let frameAsked = false;
  function requestRender() {
    if (frameAsked)
      return;
    frameAsked = true;
    window.requestAnimationFrame(() => {
      frameAsked = false;
      render();
    });
  }
  controls.addEventListener("change", requestRender);

  function resize() {
    const w = view.clientWidth, h = view.clientHeight;
    renderer.setSize(w, h);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
    requestRender();
  }
  new window.ResizeObserver(resize).observe(view);

  /* Frames the world's bounding sphere. */
  function fit() {
    const s = window.CQI.bounds(state.doc ? state.doc.shapes : []);
    state.reach = s.radius * 2;
    state.scale = Math.max(s.radius * 0.04, 1e-3);
    const dist = s.radius / Math.sin((camera.fov * Math.PI) / 360) * 1.1;
    controls.target.copy(s.center);
    camera.position.copy(s.center).add(new T.Vector3(0.6, 0.5, 0.8).normalize().multiplyScalar(dist));
    camera.near = dist / 1000;
    camera.far = dist * 100;
    camera.updateProjectionMatrix();
    controls.update();
    requestRender();
  }

  /* Runs an async step, showing its failure rather than throwing it away. */
  async function guarded(fn) {
    state.busy++;
    try {
      await fn();
      panels.error("");
    } catch (e) {
      panels.error(e.message);
    } finally {
      state.busy--;
    }
  }

  async function healthAndWorlds() {
    const probe = (p) => api.get(p).then((v) => v.status, (e) => "down (" + (e.status || e.message) + ")");
    const [h, r, list] = await Promise.all([probe("healthz"), probe("readyz"), api.worlds()]);
    panels.health(h, r);
    panels.worldList(list.worlds, state.world, (w) => { window.location.hash = "world=" + encodeURIComponent(w); });
  }

  const afterFrame = () => new Promise((ok) => window.requestAnimationFrame(() => ok()));

  async function openWorld(name) {
    stopLive();
    const t0 = window.performance.now();
    state.world = name;
    state.picked = [];
    for (const o of Object.values(ov))
      o.clear();
    state.rays = [];
    const [info, doc] = await Promise.all([api.world(name), api.exportWorld(name)]);
    state.info = info;
    state.doc = doc;
    shapes.update(doc.shapes);
    for (const id of ["world-box", "overlay-box", "ray-box", "query-box", "pick-box", "fallback-box"])
      $(id).hidden = false;
    panels.worldInfo(info);
    panels.picked(null);
    fit();
    await refreshOverlays();
    render();
    await afterFrame();
    state.loadMs = window.performance.now() - t0;
    counters();
    await healthAndWorlds();
    startLive();
  }

  /* One refresh: the export's poses go into the instance matrices (a
     rebuild only when shapes came, went or changed), then the overlays
     that follow the world. */
  async function refresh() {
    if (!state.world)
      return;
    const t0 = window.performance.now();
    const [doc, info] = await Promise.all([api.exportWorld(state.world), api.world(state.world)]);
    state.doc = doc;
    state.info = info;
    shapes.update(doc.shapes);
    panels.worldInfo(info);
    await refreshOverlays();
    requestRender();
    const now = window.performance.now();
    state.lastRefreshMs = now - t0;
    state.refreshes++;
    state.done.push(now);
    while (state.done.length && state.done[0] < now - 2000)
      state.done.shift();
    counters();
  }

  /* Refreshes completed per second over the last two seconds. */
  function refreshHz() {
    const d = state.done;
    return d.length < 2 ? 0 : (d.length - 1) / ((d[d.length - 1] - d[0]) / 1000);
  }

  function counters() {
    $("counters").textContent = state.doc.shapes.length + " shapes · " + shapes.groups.size + " draw groups · load " +
      (state.loadMs === null ? "…" : state.loadMs.toFixed(0) + " ms") + " · refresh " + refreshHz().toFixed(1) +
      " Hz (" + (state.lastRefreshMs === null ? "…" : state.lastRefreshMs.toFixed(0) + " ms") + ")";
  }

  const on = (id) => $(id).checked;

  async function refreshOverlays() {
    const w = state.world;
    if (on("ov-pairs"))
      window.CQI.drawPairs(ov.pairs, shapes, (await api.pairs(w)).pairs);
    else
      ov.pairs.clear();
    // contacts writes the world's pair cache (docs/INSPECTOR.md): only when asked.
    if (on("ov-contacts") || on("ov-ccd")) {
      const dt = Number($("ccd-dt").value);
      const answer = await api.contacts(w, on("ov-ccd") && dt > 0 ? {dt} : {});
      if (on("ov-contacts"))
        window.CQI.drawContacts(ov.contacts, answer, state.scale);
      else
        ov.contacts.clear();
      if (on("ov-ccd"))
        window.CQI.drawToi(ov.ccd, answer, shapes, dt, state.scale);
      else
        ov.ccd.clear();
    } else {
      ov.contacts.clear();
      ov.ccd.clear();
    }
    if (on("ov-fallbacks"))
      await drawFallbacks();
    else
      ov.fallbacks.clear();
    ov.rays.visible = on("ov-rays");
    ov.query.visible = on("ov-query");
    outlinePicked();
    info();
  }

  async function drawFallbacks() {
    const records = (await api.fallbacks()).fallbacks;
    panels.fallbacks(records, state.world);
    ov.fallbacks.clear();
    const ids = new Set();
    for (const f of records)
      if (f.world === state.world)
        for (const id of [f.a, f.b])
          if (id !== null)
            ids.add(id);
    for (const id of ids) {
      const o = shapes.outline(id, window.CQI.COLORS.fallback);
      if (o)
        ov.fallbacks.add(o);
    }
    ov.fallbacks.count = ids.size;
    state.fallbackCount = records.length;
  }

  function info() {
    $("overlay-info").textContent = "pairs " + ov.pairs.count + " · contacts " + ov.contacts.count + " (" +
      ov.contacts.arrows + " normals) · CCD hits " + ov.ccd.count + " · fallback shapes " + ov.fallbacks.count;
  }

  function outlinePicked() {
    ov.pick.clear();
    state.picked.forEach((id, i) => {
      const o = shapes.outline(id, i === state.picked.length - 1 ? 0xffffff : 0xffff00);
      if (o)
        ov.pick.add(o);
    });
  }

  /* Live refresh at the chosen rate: one refresh in flight at a time, each
     due a period after the last was due (so a slow one is made up by the
     next wait, and the rate holds on average); one that ran over a whole
     period resets the schedule rather than firing a burst, so a slow
     daemon is never piled on. */
  function startLive() {
    stopLive();
    state.live = Number($("rate").value);
    if (!state.live)
      return;
    const period = 1000 / state.live;
    const generation = state.liveGeneration;
    let due = window.performance.now() + period;
    const tick = async () => {
      await guarded(refresh);
      if (generation !== state.liveGeneration)
        return; // stopped or restarted while this refresh was in flight
      const now = window.performance.now();
      due = now > due + period ? now : due + period;
      state.liveTimer = window.setTimeout(tick, Math.max(0, due - now));
    };
    state.liveTimer = window.setTimeout(tick, period);
  }

  function stopLive() {
    state.liveGeneration++;
    window.clearTimeout(state.liveTimer);
    state.liveTimer = null;
  }

  /* ---- picking and rays: cast by the daemon itself, on its own geometry ---- */
  function rayThrough(event) {
    const r = renderer.domElement.getBoundingClientRect();
    const ndc = new T.Vector2(((event.clientX - r.left) / r.width) * 2 - 1, -((event.clientY - r.top) / r.height) * 2 + 1);
    const caster = new T.Raycaster();
    caster.setFromCamera(ndc, camera);
    return {origin: caster.ray.origin.toArray(), direction: caster.ray.direction.toArray()};
  }

  async function pickAt(event) {
    const ray = rayThrough(event);
    if (event.shiftKey)
      return castRay(ray);
    const hit = (await api.raycast(state.world, {rays: [ray]})).hits[0];
    pick(hit ? hit.id : null);
  }

  function pick(id) {
    const w = id === null ? null : shapes.where.get(id);
    if (w) {
      state.picked = state.picked.filter((p) => p !== id).concat([id]).slice(-2);
    }
    panels.picked(w ? w.shape : null);
    const two = state.picked.map((p) => shapes.where.get(p));
    $("sat").disabled = !(two.length === 2 && two.every((x) => x && x.shape.shape.type === "box"));
    outlinePicked();
    requestRender();
  }

  async function castRay(ray) {
    const answer = await api.raycast(state.world, {rays: [ray], all: true});
    const hits = answer.hits[0];
    window.CQI.drawRay(ov.rays, ray, hits, state.reach, state.scale);
    state.rays.push({ray, hits});
    $("ray-result").replaceChildren(...(hits.length ? hits : [null]).map((h) =>
      panels.el("div", h ? "hit " + h.id + " at " + h.distance.toPrecision(6) + " point " +
        h.point.map((x) => +x.toPrecision(5)).join(", ") : "no hit", "ray-hit")));
    requestRender();
  }

  function vector(text) {
    const v = text.replace(/[[\]()]/g, " ").split(/[\s,]+/).filter((x) => x !== "").map(Number);
    if (v.length !== 3 || v.some((x) => !Number.isFinite(x)))
      throw new Error("a vector is three numbers: " + text);
    return v;
  }

  /* ---- overlap and sweep queries, drawn where they were asked ---- */
  function ghost(shape, pose, color) {
    const d = window.CQI.describe({id: "query", shape, layer: 0}, state.reach * 2);
    const m = window.CQI.poseMatrix(pose || {});
    if (d.local)
      m.multiply(d.local);
    const mesh = new T.Mesh(d.geometry(), new T.MeshBasicMaterial({color, wireframe: true}));
    mesh.matrixAutoUpdate = false;
    mesh.matrix.copy(m);
    return mesh;
  }

  function queryBody() {
    const body = JSON.parse($("query-body").value);
    if (!body.shape)
      throw new Error("the query needs a shape");
    return body;
  }

  async function overlap() {
    const body = queryBody();
    delete body.translation;
    const answer = await api.overlap(state.world, body);
    ov.query.clear();
    ov.query.add(ghost(body.shape, body.pose, window.CQI.COLORS.query));
    highlight(ov.query, answer.ids, window.CQI.COLORS.query);
    state.queryHits = answer.ids;
    $("query-result").textContent = answer.ids.length ? "overlaps " + answer.ids.join(", ") : "overlaps nothing";
    requestRender();
  }

  async function sweep() {
    const body = queryBody();
    const answer = await api.sweep(state.world, body);
    ov.query.clear();
    const C = window.CQI.COLORS;
    const from = new T.Vector3(...((body.pose && body.pose.position) || [0, 0, 0]));
    const t = answer.hit ? answer.hit.time : 1;
    const to = from.clone().addScaledVector(new T.Vector3(...body.translation), t);
    ov.query.add(ghost(body.shape, body.pose, C.query));
    ov.query.add(ghost(body.shape, Object.assign({}, body.pose, {position: to.toArray()}), C.hit));
    ov.query.line([from, from.clone().add(new T.Vector3(...body.translation))], C.query, true);
    if (answer.hit) {
      ov.query.marker(new T.Vector3(...answer.hit.point), C.hit, state.scale * 0.3);
      if (answer.hit.normal)
        ov.query.arrow(new T.Vector3(...answer.hit.point), new T.Vector3(...answer.hit.normal), state.scale, C.hit);
      highlight(ov.query, [answer.hit.id], C.hit);
    }
    state.queryHits = answer.hit ? [answer.hit.id] : [];
    $("query-result").textContent = answer.hit ? "hits " + answer.hit.id + " at time " + answer.hit.time : "no hit";
    requestRender();
  }

  function highlight(overlay, ids, color) {
    for (const id of ids) {
      const o = shapes.outline(id, color);
      if (o)
        overlay.add(o);
    }
    overlay.count = ids.length;
  }

  async function explain() {
    const [a, b] = state.picked.map((id) => shapes.where.get(id).shape);
    const result = await api.pair({a: {shape: a.shape, pose: a.pose}, b: {shape: b.shape, pose: b.pose}, explain: true});
    panels.satTable(a.id, b.id, result);
    state.sat = result;
  }

  /* ---- the token prompt: shown on the first 401, kept for the tab ---- */
  api.onToken((wrong) => new Promise((ok) => {
    $("token-why").textContent = wrong ? "That token was refused; try again." : "This daemon needs its bearer token.";
    $("token-prompt").hidden = false;
    $("token-input").focus();
    $("token-form").onsubmit = (e) => {
      e.preventDefault();
      $("token-prompt").hidden = true;
      ok($("token-input").value);
    };
  }));

  /* ---- wiring ---- */
  let down = null;
  renderer.domElement.addEventListener("pointerdown", (e) => { down = [e.clientX, e.clientY]; });
  renderer.domElement.addEventListener("pointerup", (e) => {
    // A click, not the end of an orbit drag.
    if (down && Math.hypot(e.clientX - down[0], e.clientY - down[1]) < 4 && state.world)
      guarded(() => pickAt(e));
    down = null;
  });
  $("fit").addEventListener("click", fit);
  $("refresh").addEventListener("click", () => guarded(refresh));
  $("rate").addEventListener("change", startLive);
  for (const id of ["ov-pairs", "ov-contacts", "ov-ccd", "ov-rays", "ov-query", "ov-fallbacks"])
    $(id).addEventListener("change", () => guarded(async () => { await refreshOverlays(); requestRender(); }));
  $("ray-form").addEventListener("submit", (e) => {
    e.preventDefault();
    guarded(() => castRay({origin: vector($("ray-origin").value), direction: vector($("ray-dir").value)}));
  });
  $("query-overlap").addEventListener("click", () => guarded(overlap));
  $("query-sweep").addEventListener("click", () => guarded(sweep));
  $("sat").addEventListener("click", () => guarded(explain));

  function hashWorld() {
    const m = /(?:^#|&)world=([^&]*)/.exec(window.location.hash);
    return m ? decodeURIComponent(m[1]) : null;
  }
  window.addEventListener("hashchange", () => {
    const w = hashWorld();
    if (w && w !== state.world)
      guarded(() => openWorld(w));
  });

  /* What tests and scripts read: the page's own view of what it drew. */
  window.__inspector = {
    get ready() { return state.busy === 0 && state.loadMs !== null; },
    get busy() { return state.busy; },
    get world() { return state.world; },
    get shapeCount() { return state.doc ? state.doc.shapes.length : 0; },
    get instances() { return shapes.instanceCount(); },
    get groups() { return shapes.groups.size; },
    get rebuilds() { return shapes.rebuilds; },
    get drawCalls() { return renderer.info.render.calls; },
    get loadMs() { return state.loadMs; },
    get refreshes() { return state.refreshes; },
    get refreshHz() { return refreshHz(); },
    get lastRefreshMs() { return state.lastRefreshMs; },
    get frames() { return state.frames; },
    get picked() { return state.picked.length ? state.picked[state.picked.length - 1] : null; },
    get rays() { return state.rays; },
    get sat() { return state.sat || null; },
    get queryHits() { return state.queryHits; },
    get overlays() {
      const o = {};
      for (const [k, v] of Object.entries(ov))
        o[k] = {count: v.count, arrows: v.arrows, visible: v.group.visible, objects: v.group.children.length};
      return o;
    },
    get camera() {
      camera.updateMatrixWorld();
      return {view: camera.matrixWorldInverse.toArray(), projection: camera.projectionMatrix.toArray(),
        canvas: renderer.domElement.getBoundingClientRect().toJSON()};
    },
    position: (id) => { const p = shapes.position(id); return p ? p.toArray() : null; },
    layerColor: (layer) => window.CQI.layerColor(layer),
    render,
  };

  guarded(async () => {
    await healthAndWorlds();
    const w = hashWorld();
    if (w)
      await openWorld(w);
  });
}());
