/* The overlays: each is one THREE.Group, emptied and redrawn from an API
   answer, so toggling or refreshing one never touches the shapes. */
(function () {
  "use strict";
  const T = window.THREE;
  const v3 = (a) => new T.Vector3(a[0], a[1], a[2]);

  const COLORS = {pair: 0xffe119, point: 0xffffff, normal: 0x00e5ff, toi: 0xff8c00,
    ray: 0xffffff, hit: 0xff3030, query: 0x00ff88, fallback: 0xff2020, sat: 0xffff00};

  class Overlay {
    constructor(scene, name) {
      this.name = name;
      this.group = new T.Group();
      this.group.name = name;
      this.count = 0; // what it drew (pairs, arrows, hits…), for the page's state
      this.arrows = 0;
      scene.add(this.group);
    }

    clear() {
      for (const o of this.group.children.slice()) {
        this.group.remove(o);
        o.traverse((x) => {
          if (x.geometry && !x.userData.shared)
            x.geometry.dispose();
          if (x.material)
            x.material.dispose();
        });
      }
      this.count = 0;
      this.arrows = 0;
    }

    set visible(on) { this.group.visible = on; }

    line(points, color, dashed) {
      const g = new T.BufferGeometry().setFromPoints(points);
      const m = dashed ? new T.LineDashedMaterial({color, dashSize: 0.3, gapSize: 0.2})
        : new T.LineBasicMaterial({color});
      const l = new T.Line(g, m);
      if (dashed)
        l.computeLineDistances();
      this.group.add(l);
      return l;
    }

    segments(pairs, color) {
      const pts = [];
      for (const [a, b] of pairs)
        pts.push(a, b);
      const g = new T.BufferGeometry().setFromPoints(pts);
      this.group.add(new T.LineSegments(g, new T.LineBasicMaterial({color})));
    }

    marker(at, color, size) {
      const m = new T.Mesh(MARKER, new T.MeshBasicMaterial({color, depthTest: false}));
      m.userData.shared = true;
      m.position.copy(at);
      m.scale.setScalar(size);
      m.renderOrder = 11;
      this.group.add(m);
      return m;
    }

    arrow(from, dir, length, color) {
      const d = dir.clone().normalize();
      const a = new T.ArrowHelper(d, from, length, color, length * 0.3, length * 0.15);
      a.traverse((x) => { if (x.material) { x.material.depthTest = false; x.renderOrder = 12; } });
      a.name = "arrow";
      this.group.add(a);
      this.arrows++;
      return a;
    }

    add(object) {
      this.group.add(object);
    }
  }

  const MARKER = new T.SphereBufferGeometry(1, 10, 8);

  /* Broadphase pairs: a line between the two shapes' origins. */
  function drawPairs(ov, shapes, pairs) {
    ov.clear();
    const lines = [];
    for (const [a, b] of pairs) {
      const pa = shapes.position(a), pb = shapes.position(b);
      if (pa && pb)
        lines.push([pa, pb]);
    }
    if (lines.length)
      ov.segments(lines, COLORS.pair);
    ov.count = pairs.length;
  }

  /* Contacts: every manifold point, with the pair's normal as an arrow
     whose length grows with the point's depth (at least scale). */
  function drawContacts(ov, answer, scale) {
    ov.clear();
    for (const p of answer.pairs) {
      if (!p.normal)
        continue; // a dropped fallback has no normal: nothing to draw
      const n = v3(p.normal);
      for (const pt of p.points) {
        const at = v3(pt.position);
        ov.marker(at, COLORS.point, scale * 0.25);
        ov.arrow(at, n, scale * (1 + Math.max(0, pt.depth) / scale * 4), COLORS.normal);
      }
    }
    ov.count = answer.pairs.length;
  }

  /* CCD hits: each swept shape's path over dt, solid up to the time of
     impact and dashed after it, the impact point and its normal. */
  function drawToi(ov, answer, shapes, dt, scale) {
    ov.clear();
    for (const h of answer.toi) {
      const w = shapes.where.get(h.id);
      if (!w)
        continue;
      const from = shapes.position(h.id);
      const vel = v3(w.shape.velocity || [0, 0, 0]).multiplyScalar(dt);
      const stop = from.clone().addScaledVector(vel, h.time);
      ov.line([from, stop], COLORS.toi, false);
      ov.line([stop, from.clone().add(vel)], COLORS.toi, true);
      ov.marker(v3(h.point), COLORS.toi, scale * 0.3);
      if (h.normal)
        ov.arrow(v3(h.point), v3(h.normal), scale, COLORS.toi);
    }
    ov.count = answer.toi.length;
  }

  /* A ray and its hits (every hit, nearest first), each with its normal. */
  function drawRay(ov, ray, hits, reach, scale) {
    const o = v3(ray.origin);
    const d = v3(ray.direction).normalize();
    const last = hits.length ? hits[hits.length - 1].distance : reach;
    ov.line([o, o.clone().addScaledVector(d, Math.max(last, reach * 0.25))], COLORS.ray, hits.length === 0);
    for (const h of hits) {
      ov.marker(v3(h.point), COLORS.hit, scale * 0.3);
      ov.arrow(v3(h.point), v3(h.normal), scale * 2, COLORS.hit);
    }
    ov.count += hits.length;
  }

  window.CQI = window.CQI || {};
  Object.assign(window.CQI, {Overlay, drawPairs, drawContacts, drawToi, drawRay, COLORS});
}());
