/* The world's shapes as three.js objects. Shapes that share a geometry
   and a colour share one InstancedMesh (boxes and spheres are unit
   geometries scaled by the instance matrix), so a 10,000-box world is a
   handful of draw calls, and a refresh that only moved shapes rewrites
   instance matrices in place instead of rebuilding the scene. */
(function () {
  "use strict";
  const T = window.THREE;

  /* Colour by layer: the lowest layer bit picks from the palette; a shape
     on every layer (the default) or on none is grey (docs/INSPECTOR.md). */
  const PALETTE = [0xe6194b, 0x3cb44b, 0x4363d8, 0xf58231, 0x911eb4, 0x42d4f4,
    0xf032e6, 0xbfef45, 0xfabed4, 0x469990, 0xdcbeff, 0x9a6324];
  const ALL_LAYERS = 4294967295;
  const GREY = 0xa0a0a0;

  function layerColor(layer) {
    if (layer === ALL_LAYERS || layer === 0 || layer === undefined)
      return GREY;
    let bit = 0;
    while (((layer >>> bit) & 1) === 0)
      bit++;
    return PALETTE[bit % PALETTE.length];
  }

  /* The pose's matrix: the axes are the local axes in world space, the
     columns of the rotation. */
  function poseMatrix(pose, out) {
    const m = out || new T.Matrix4();
    const a = pose && pose.axes;
    const p = (pose && pose.position) || [0, 0, 0];
    if (a)
      m.set(a[0][0], a[1][0], a[2][0], p[0], a[0][1], a[1][1], a[2][1], p[1],
        a[0][2], a[1][2], a[2][2], p[2], 0, 0, 0, 1);
    else
      m.makeTranslation(p[0], p[1], p[2]);
    return m;
  }

  const unitBox = new T.BoxBufferGeometry(2, 2, 2);
  const unitSphere = new T.SphereBufferGeometry(1, 24, 16);
  const MIN_SCALE = 1e-3; // a flat box stays drawable

  /* A capsule along local Y: a lathe of its outline. */
  function capsuleGeometry(r, hh) {
    const pts = [];
    const steps = 8;
    for (let i = 0; i <= steps; i++) {
      const t = -Math.PI / 2 + (i / steps) * (Math.PI / 2);
      pts.push(new T.Vector2(r * Math.cos(t), -hh + r * Math.sin(t)));
    }
    for (let i = 0; i <= steps; i++) {
      const t = (i / steps) * (Math.PI / 2);
      pts.push(new T.Vector2(r * Math.cos(t), hh + r * Math.sin(t)));
    }
    return new T.LatheBufferGeometry(pts, 20);
  }

  /* Directions to round a hull by its radius: the hull of every point
     moved by radius along each is the rounded hull, to a few percent. */
  const ROUND_DIRS = [];
  for (let x = -1; x <= 1; x++)
    for (let y = -1; y <= 1; y++)
      for (let z = -1; z <= 1; z++)
        if (x || y || z)
          ROUND_DIRS.push(new T.Vector3(x, y, z).normalize());

  function convexGeometry(points, radius) {
    const pts = [];
    for (const p of points) {
      const v = new T.Vector3(p[0], p[1], p[2]);
      if (radius > 0)
        for (const d of ROUND_DIRS)
          pts.push(v.clone().addScaledVector(d, radius));
      else
        pts.push(v);
    }
    try {
      return new T.BufferGeometry().fromGeometry(new T.ConvexGeometry(pts));
    } catch (e) {
      // A flat or degenerate hull (fewer than 4 points off one plane): its outline.
      return new T.BufferGeometry().setFromPoints(pts);
    }
  }

  function soupGeometry(vertices, triangles) {
    const g = new T.BufferGeometry();
    g.setAttribute("position", new T.Float32BufferAttribute(vertices.flat(), 3));
    if (triangles)
      g.setIndex(triangles.flat());
    g.computeVertexNormals();
    return g;
  }

  /* A plane as a large quad: its local frame puts the quad's +z on the
     normal, at offset along it. */
  function planeLocal(shape, size) {
    const n = new T.Vector3(shape.normal[0], shape.normal[1], shape.normal[2]);
    const q = new T.Quaternion().setFromUnitVectors(new T.Vector3(0, 0, 1), n);
    const m = new T.Matrix4().makeRotationFromQuaternion(q);
    m.setPosition(n.multiplyScalar(shape.offset));
    return m.multiply(new T.Matrix4().makeScale(size, size, 1));
  }

  const unitQuad = new T.PlaneBufferGeometry(2, 2);

  /* What a shape is drawn with: a group key (shapes with equal keys share
     an InstancedMesh), the geometry to build for a new group, and the
     local matrix its instance matrix starts from. */
  function describe(s, planeSize) {
    const sh = s.shape;
    const color = layerColor(s.layer);
    const m = (scale) => new T.Matrix4().makeScale(scale[0], scale[1], scale[2]);
    switch (sh.type) {
    case "box": {
      const h = sh.half_extents.map((v) => Math.max(v, MIN_SCALE));
      return {key: "box|" + color, geometry: () => unitBox, local: m(h), color};
    }
    case "sphere": {
      const r = Math.max(sh.radius, MIN_SCALE);
      return {key: "sphere|" + color, geometry: () => unitSphere, local: m([r, r, r]), color};
    }
    case "capsule": {
      const r = Math.max(sh.radius, MIN_SCALE);
      return {key: "capsule|" + r + "|" + sh.half_height + "|" + color,
        geometry: () => capsuleGeometry(r, sh.half_height), local: null, color};
    }
    case "plane":
      return {key: "plane|" + s.id, geometry: () => unitQuad, local: planeLocal(sh, planeSize), color,
        flat: true, plane: true};
    case "convex":
      return {key: "convex|" + s.id, geometry: () => convexGeometry(sh.points, sh.radius || 0), local: null, color};
    case "triangle":
      return {key: "triangle|" + s.id, geometry: () => soupGeometry(sh.vertices, null), local: null, color, flat: true};
    case "mesh":
      return {key: "mesh|" + s.id, geometry: () => soupGeometry(sh.vertices, sh.triangles), local: null, color,
        flat: true};
    default:
      return {key: "unknown|" + s.id, geometry: () => unitSphere, local: m([0.1, 0.1, 0.1]), color};
    }
  }

  /* The world's bounding sphere from the shapes' positions and sizes
     (planes aside: they are unbounded). */
  function bounds(shapes) {
    const box = new T.Box3();
    const v = new T.Vector3();
    for (const s of shapes) {
      if (s.shape.type === "plane")
        continue;
      const p = (s.pose && s.pose.position) || [0, 0, 0];
      const r = reach(s.shape);
      box.expandByPoint(v.set(p[0] - r, p[1] - r, p[2] - r));
      box.expandByPoint(v.set(p[0] + r, p[1] + r, p[2] + r));
    }
    if (box.isEmpty())
      box.set(new T.Vector3(-5, -5, -5), new T.Vector3(5, 5, 5));
    return box.getBoundingSphere(new T.Sphere());
  }

  /* How far a shape reaches from its origin. */
  function reach(sh) {
    const far = (pts) => pts.reduce((a, p) => Math.max(a, Math.hypot(p[0], p[1], p[2])), 0);
    switch (sh.type) {
    case "box": return Math.hypot(...sh.half_extents);
    case "sphere": return sh.radius;
    case "capsule": return sh.radius + sh.half_height;
    case "convex": return far(sh.points) + (sh.radius || 0);
    case "triangle": case "mesh": return far(sh.vertices);
    default: return 0;
    }
  }

  /* The drawn world: groups of instances, and where each id is. */
  class ShapeLayer {
    constructor(scene) {
      this.root = new T.Group();
      scene.add(this.root);
      this.groups = new Map(); // key -> {mesh, ids, locals}
      this.where = new Map();  // id -> {group, index, shape}
      this.planeSize = 100;
      this.rebuilds = 0;
      this.tmp = new T.Matrix4();
    }

    /* Draws shapes; when every id keeps its group, only matrices are
       written. Returns true when the scene had to be rebuilt. */
    update(shapes) {
      const descs = shapes.map((s) => describe(s, this.planeSize));
      if (this.sameLayout(shapes, descs)) {
        this.moveAll(shapes, descs);
        return false;
      }
      this.build(shapes, descs);
      return true;
    }

    sameLayout(shapes, descs) {
      if (shapes.length !== this.where.size)
        return false;
      for (let i = 0; i < shapes.length; i++) {
        const w = this.where.get(shapes[i].id);
        if (!w || w.group.key !== descs[i].key || !sameShape(w.shape.shape, shapes[i].shape))
          return false;
      }
      return true;
    }

    moveAll(shapes, descs) {
      const touched = new Set();
      for (let i = 0; i < shapes.length; i++) {
        const w = this.where.get(shapes[i].id);
        w.shape = shapes[i];
        this.place(w.group, w.index, shapes[i], descs[i]);
        touched.add(w.group);
      }
      for (const g of touched)
        g.mesh.instanceMatrix.needsUpdate = true;
    }

    place(group, index, s, d) {
      const m = poseMatrix(s.pose, this.tmp);
      if (d.local)
        m.multiply(d.local);
      group.mesh.setMatrixAt(index, m);
    }

    clear() {
      for (const g of this.groups.values()) {
        this.root.remove(g.mesh);
        if (g.mesh.geometry !== unitBox && g.mesh.geometry !== unitSphere && g.mesh.geometry !== unitQuad)
          g.mesh.geometry.dispose();
        g.mesh.material.dispose();
      }
      this.groups.clear();
      this.where.clear();
    }

    build(shapes, descs) {
      this.clear();
      this.rebuilds++;
      const sphere = bounds(shapes);
      this.planeSize = Math.max(50, sphere.radius * 4);
      const members = new Map();
      for (let i = 0; i < shapes.length; i++) {
        const list = members.get(descs[i].key) || [];
        list.push(i);
        members.set(descs[i].key, list);
      }
      for (const [key, list] of members) {
        const d = descs[list[0]];
        const material = new T.MeshLambertMaterial({
          color: d.color, side: d.flat ? T.DoubleSide : T.FrontSide,
          transparent: !!d.plane, opacity: d.plane ? 0.25 : 1, depthWrite: !d.plane,
        });
        const mesh = new T.InstancedMesh(d.geometry(), material, list.length);
        mesh.frustumCulled = false; // r111 culls instances by the geometry's own bounds
        mesh.userData.key = key;
        const group = {key, mesh, ids: []};
        list.forEach((i, index) => {
          group.ids.push(shapes[i].id);
          this.where.set(shapes[i].id, {group, index, shape: shapes[i]});
          this.place(group, index, shapes[i], descs[i]);
        });
        this.groups.set(key, group);
        this.root.add(mesh);
      }
    }

    /* The world matrix id is drawn with (pose times local), or null. */
    matrixOf(id) {
      const w = this.where.get(id);
      if (!w)
        return null;
      const m = new T.Matrix4();
      w.group.mesh.getMatrixAt(w.index, m);
      return m;
    }

    position(id) {
      const w = this.where.get(id);
      const p = w && w.shape.pose && w.shape.pose.position;
      return w ? new T.Vector3(...(p || [0, 0, 0])) : null;
    }

    /* A wireframe copy of id's drawing, for highlights. */
    outline(id, color) {
      const w = this.where.get(id);
      if (!w)
        return null;
      const mesh = new T.Mesh(w.group.mesh.geometry,
        new T.MeshBasicMaterial({color, wireframe: true, depthTest: false, transparent: true}));
      mesh.matrixAutoUpdate = false;
      mesh.matrix.copy(this.matrixOf(id));
      mesh.renderOrder = 10;
      return mesh;
    }

    /* Instances drawn, counted from the scene's meshes themselves. */
    instanceCount() {
      let n = 0;
      this.root.traverse((o) => {
        if (o.isInstancedMesh)
          n += o.count;
      });
      return n;
    }
  }

  /* Shapes equal in what the drawing depends on (poses aside). Boxes and
     spheres are scaled instances, so their sizes are compared here. */
  function sameShape(a, b) {
    if (a.type !== b.type)
      return false;
    if (a.type === "box")
      return a.half_extents[0] === b.half_extents[0] && a.half_extents[1] === b.half_extents[1] &&
        a.half_extents[2] === b.half_extents[2];
    if (a.type === "sphere")
      return a.radius === b.radius;
    if (a.type === "capsule")
      return true; // the key holds its sizes
    return JSON.stringify(a) === JSON.stringify(b);
  }

  window.CQI = window.CQI || {};
  Object.assign(window.CQI, {ShapeLayer, layerColor, poseMatrix, describe, bounds});
}());
