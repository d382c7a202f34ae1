/* The side panel's parts, written with textContent only: nothing the
   daemon answers is ever parsed as HTML. */
(function () {
  "use strict";
  const $ = (id) => document.getElementById(id);

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined)
      e.textContent = String(text);
    if (cls)
      e.className = cls;
    return e;
  }

  function table(head, rows) {
    const t = el("table");
    const tr = el("tr");
    for (const h of head)
      tr.appendChild(el("th", h));
    t.appendChild(tr);
    for (const r of rows) {
      const row = el("tr", undefined, r.cls);
      for (const c of r.cells)
        row.appendChild(el("td", c));
      t.appendChild(row);
    }
    return t;
  }

  function worldList(worlds, open, onOpen) {
    const ul = $("worlds");
    ul.replaceChildren();
    for (const w of worlds) {
      const li = el("li", undefined, w.name === open ? "open" : "");
      const a = el("a", w.name);
      a.href = "#world=" + encodeURIComponent(w.name);
      a.addEventListener("click", () => onOpen(w.name));
      li.appendChild(a);
      li.appendChild(document.createTextNode(" — " + w.shapes + " shapes"));
      ul.appendChild(li);
    }
    if (!worlds.length)
      ul.appendChild(el("li", "no worlds yet (PUT /v1/worlds/NAME)"));
  }

  function health(h, r) {
    $("health").textContent = "healthz: " + h + " · readyz: " + r;
  }

  function worldInfo(info) {
    $("world-name").textContent = info.name;
    $("world-info").textContent = JSON.stringify({settings: info.settings, stats: info.stats}, null, 1);
  }

  const hex = (v) => "0x" + (v >>> 0).toString(16);
  const fmt = (a) => "[" + a.map((x) => +x.toPrecision(6)).join(", ") + "]";

  function picked(s) {
    const box = $("picked");
    box.replaceChildren();
    if (!s) {
      box.textContent = "click a shape";
      return;
    }
    const p = s.pose || {};
    const lines = [
      "id: " + s.id, "type: " + s.shape.type,
      "position: " + fmt(p.position || [0, 0, 0]),
      "axes: " + (p.axes || [[1, 0, 0], [0, 1, 0], [0, 0, 1]]).map(fmt).join(" "),
      "layer: " + hex(s.layer) + " · mask: " + hex(s.mask),
    ];
    for (const l of lines)
      box.appendChild(el("div", l, l.startsWith("id: ") ? "picked-id" : ""));
    box.appendChild(el("pre", JSON.stringify(s, null, 1)));
  }

  /* The 15 SAT axes; the one the test reports (sat.axis: the separating
     axis when the pair is apart) is highlighted. */
  function satTable(a, b, result) {
    const box = $("sat-result");
    box.replaceChildren();
    const chosen = result.sat && result.sat.axis;
    box.appendChild(el("div", a + " vs " + b + ": " + (result.overlap ? "overlapping" : "separated") +
      (chosen ? " · axis " + chosen + " gap " + result.sat.gap : ""), "small"));
    const rows = (result.axes || []).map((x) => ({
      cls: x.skipped ? "skipped" : x.name === chosen ? (result.overlap ? "here" : "separating") : "",
      cells: [x.name, x.skipped ? "skipped (parallel edges)" : x.gap],
    }));
    box.appendChild(table(["axis", "gap"], rows));
  }

  function fallbacks(records, world) {
    const box = $("fallbacks");
    box.replaceChildren();
    if (!records.length) {
      box.textContent = "no fallbacks logged";
      return;
    }
    box.appendChild(table(["seq", "world", "a", "b", "reason", "action"], records.map((f) => ({
      cls: f.world === world ? "here" : "",
      cells: [f.seq, f.world === null ? "(pair)" : f.world, f.a, f.b, f.reason, f.action],
    }))));
  }

  function error(text) {
    $("error").textContent = text || "";
  }

  window.CQI = window.CQI || {};
  window.CQI.panels = {$, el, table, worldList, health, worldInfo, picked, satTable, fallbacks, error};
}());
