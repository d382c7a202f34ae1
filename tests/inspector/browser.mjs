// make inspector-test: the web inspector in headless Chromium against the
// real daemon. Each check seeds a world over HTTP, opens /inspect/#world=…
// and compares what the page says it drew (window.__inspector) and what
// the screenshot shows against values computed here from the seeded
// shapes and the documented palette (docs/INSPECTOR.md).
//
//   node tests/inspector/browser.mjs build/collisiond build/inspector
import {mkdirSync, writeFileSync} from "node:fs";
import {join} from "node:path";
import {browser, http, project, readPng, settled, startDaemon} from "./lib.mjs";

const [binary, outDir] = process.argv.slice(2);
if (!binary || !outDir) {
  console.error("usage: browser.mjs path/to/collisiond OUT_DIR");
  process.exit(2);
}
mkdirSync(outDir, {recursive: true});

// The palette as docs/INSPECTOR.md lists it: layer bit -> colour.
const LAYER_COLOR = {1: 0xe6194b, 2: 0x3cb44b, 4: 0x4363d8, 8: 0xf58231};
const NORMAL_COLOR = 0x00e5ff; // contact normal arrows
const HIT_COLOR = 0xff3030;    // ray hits
const rgb = (hex) => [(hex >> 16) & 255, (hex >> 8) & 255, hex & 255];

const I = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
const pose = (position, axes = I) => ({position, axes});
const SCENE = [
  {id: "crate", shape: {type: "box", half_extents: [1, 1, 1]}, pose: pose([0, 0, 0]), layer: 2},
  {id: "ball", shape: {type: "sphere", radius: 1}, pose: pose([4, 0, 0]), layer: 4},
  {id: "pill", shape: {type: "capsule", radius: 0.5, half_height: 1}, pose: pose([-4, 0, 0]), layer: 8},
  {id: "gem", shape: {type: "convex", points: [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], radius: 0.1},
    pose: pose([0, 0, -4]), layer: 16},
  {id: "tri", shape: {type: "triangle", vertices: [[-1, 3, -1], [1, 3, -1], [0, 3, 1]]}, layer: 32},
  {id: "ramp", shape: {type: "mesh", vertices: [[-6, -2, -6], [-3, -2, -6], [-3, -1, -3]], triangles: [[0, 1, 2]]},
    layer: 64},
  {id: "floor", shape: {type: "plane", normal: [0, 1, 0], offset: -3}, layer: 1},
  ...[0, 1, 2, 3, 4].map((i) => ({id: "small-" + i, shape: {type: "box", half_extents: [0.3, 0.3, 0.3]},
    pose: pose([8 + i, 0, 8]), layer: 2})),
];

async function seed(daemon, name, shapes, token) {
  await http(daemon, "PUT", "/v1/worlds/" + name, {}, token);
  await http(daemon, "POST", "/v1/worlds/" + name + "/batch", {upsert: shapes}, token);
}

/** pixel is the colour under some shading: k * colour for 0.3 <= k <= 1.1, within 24 per channel. */
function shadeOf(pixel, hex) {
  const e = rgb(hex);
  const k = (pixel[0] * e[0] + pixel[1] * e[1] + pixel[2] * e[2]) / (e[0] ** 2 + e[1] ** 2 + e[2] ** 2);
  return k >= 0.3 && k <= 1.1 && pixel.every((p, i) => Math.abs(p - k * e[i]) <= 24);
}

/** Pixels of exactly-ish this colour (unlit overlay colours) in a box around (x, y). */
function countNear(png, x, y, r, hex) {
  const e = rgb(hex);
  let n = 0;
  for (let j = Math.max(0, Math.round(y - r)); j < Math.min(png.height, y + r); j++)
    for (let i = Math.max(0, Math.round(x - r)); i < Math.min(png.width, x + r); i++)
      if (png.pixel(i, j).every((p, k) => Math.abs(p - e[k]) <= 40))
        n++;
  return n;
}

async function shot(page, name) {
  const buf = await page.screenshot({path: join(outDir, name + ".png")});
  return readPng(buf);
}

async function open(page, daemon, world) {
  await page.goto(daemon.base + "/inspect/#world=" + encodeURIComponent(world));
  await settled(page);
}

const state = (page, expr) => page.evaluate(expr);

const checks = [];
const check = (name, fn) => checks.push({name, fn});

check("every shape is drawn, each in its layer's colour", async ({page, daemon}) => {
  await seed(daemon, "scene", SCENE);
  await open(page, daemon, "scene");
  const s = await state(page, () => ({n: window.__inspector.shapeCount, drawn: window.__inspector.instances}));
  if (s.n !== SCENE.length || s.drawn !== SCENE.length)
    throw new Error("seeded " + SCENE.length + ", page has " + s.n + " shapes and draws " + s.drawn + " instances");
  const png = await shot(page, "scene");
  const cam = await state(page, () => window.__inspector.camera);
  for (const id of ["crate", "ball", "pill"]) {
    const s0 = SCENE.find((x) => x.id === id);
    const [x, y] = project(cam, s0.pose.position).map(Math.round);
    const px = png.pixel(x, y);
    if (!shadeOf(px, LAYER_COLOR[s0.layer]))
      throw new Error(id + " at (" + x + ", " + y + ") is " + px + ", not a shade of #" + LAYER_COLOR[s0.layer].toString(16));
  }
  // The control: the background in a corner is no layer's colour.
  if (Object.values(LAYER_COLOR).some((c) => shadeOf(png.pixel(png.width - 3, 3), c)))
    throw new Error("the background matches a layer colour: the pixel check cannot fail");
});

check("clicking a shape picks it and shows its id", async ({page, daemon}) => {
  await open(page, daemon, "scene");
  const cam = await state(page, () => window.__inspector.camera);
  const [x, y] = project(cam, [4, 0, 0]);
  await page.mouse.click(x, y);
  await page.waitForFunction(() => window.__inspector.picked === "ball", null, {timeout: 10000});
  const text = await page.textContent("#picked");
  if (!text.includes("id: ball") || !text.includes("type: sphere") || !text.includes("layer: 0x4"))
    throw new Error("the picked panel says: " + text);
  await shot(page, "picked");
});

check("the contacts overlay draws each point's normal arrow", async ({page, daemon}) => {
  await seed(daemon, "touch", [
    {id: "a", shape: {type: "box", half_extents: [1, 1, 1]}, pose: pose([0, 0, 0]), layer: 1},
    {id: "b", shape: {type: "box", half_extents: [1, 1, 1]}, pose: pose([1.5, 0, 0]), layer: 4},
  ]);
  await open(page, daemon, "touch");
  const before = await state(page, () => window.__inspector.overlays.contacts.arrows);
  if (before !== 0)
    throw new Error("contacts are drawn before the overlay is on (" + before + " arrows)");
  const cam = await state(page, () => window.__inspector.camera);
  const [x, y] = project(cam, [0.5, 0, 0]);
  const off = countNear(await shot(page, "contacts-off"), x, y, 150, NORMAL_COLOR);
  await page.check("#ov-contacts");
  // Two face-aligned unit boxes overlapping by 0.5 along x touch over a
  // 2x2 face: a manifold of its four corners, so four arrows.
  await page.waitForFunction(() => window.__inspector.overlays.contacts.arrows === 4, null, {timeout: 10000});
  await settled(page);
  const onPixels = countNear(await shot(page, "contacts-on"), x, y, 150, NORMAL_COLOR);
  if (off !== 0 || onPixels < 20)
    throw new Error("normal-coloured pixels near the contact: " + off + " with the overlay off, " + onPixels + " on");
});

check("a typed ray shows its hit", async ({page, daemon}) => {
  await open(page, daemon, "scene");
  await page.fill("#ray-origin", "0, 0, 10");
  await page.fill("#ray-dir", "0, 0, -1");
  await page.click("#ray-form button");
  await page.waitForFunction(() => window.__inspector.rays.length === 1, null, {timeout: 10000});
  const ray = await state(page, () => window.__inspector.rays[0]);
  // From z = 10 down -z the first surface is the crate's face at z = 1.
  const first = ray.hits[0];
  if (!first || first.id !== "crate" || Math.abs(first.distance - 9) > 1e-9)
    throw new Error("first hit: " + JSON.stringify(first));
  const text = await page.textContent("#ray-result");
  if (!text.includes("hit crate at 9"))
    throw new Error("the ray panel says: " + text);
  await settled(page);
  const cam = await state(page, () => window.__inspector.camera);
  const [x, y] = project(cam, [0, 0, 1]);
  const red = countNear(await shot(page, "ray"), x, y, 8, HIT_COLOR);
  if (red < 5)
    throw new Error("no hit marker at the hit's projection (" + red + " pixels)");
});

check("the SAT table of two boxes highlights the separating axis", async ({page, daemon}) => {
  // Seed 000's boxes (docs/API.md): apart along A1xB2 only.
  await seed(daemon, "sat", [
    {id: "A", shape: {type: "box", half_extents: [0.833764, 1.887452, 1.82353]},
      pose: {position: [0, 0, 0], rotation: [0, 0, 0, 1]}},
    {id: "B", shape: {type: "box", half_extents: [1.061493, 1.044604, 1.472044]},
      pose: {position: [-2.171778, -2.012874, 2.111567]}},
  ]);
  await open(page, daemon, "sat");
  const cam = await state(page, () => window.__inspector.camera);
  for (const [id, p] of [["A", [0, 0, 0]], ["B", [-2.171778, -2.012874, 2.111567]]]) {
    await page.mouse.click(...project(cam, p));
    await page.waitForFunction((want) => window.__inspector.picked === want, id, {timeout: 10000});
  }
  await page.click("#sat");
  await page.waitForFunction(() => window.__inspector.sat !== null, null, {timeout: 10000});
  const rows = await page.$$eval("#sat-result tr", (trs) => trs.slice(1).map((t) => [t.className, t.cells[0].textContent]));
  const sat = await state(page, () => window.__inspector.sat);
  const marked = rows.filter((r) => r[0] === "separating" || r[0] === "here").map((r) => r[1]);
  if (rows.length !== 15 || marked.length !== 1 || marked[0] !== sat.sat.axis)
    throw new Error("rows " + rows.length + ", marked " + marked + ", the daemon's axis " + sat.sat.axis);
});

check("the pairs and CCD overlays draw what the world holds", async ({page, daemon}) => {
  // A bullet at 600 units/s, 0.1 in radius, towards a wall whose face is at
  // x = 9.5: over dt = 0.0166 it travels 9.96 and touches at 9.4 / 9.96.
  await seed(daemon, "ccd", [
    {id: "bullet", shape: {type: "sphere", radius: 0.1}, pose: pose([0, 0, 0]), velocity: [600, 0, 0]},
    {id: "wall", shape: {type: "box", half_extents: [0.5, 5, 5]}, pose: pose([10, 0, 0])},
    {id: "crate", shape: {type: "box", half_extents: [1, 1, 1]}, pose: pose([10, 8, 0])},
    {id: "lid", shape: {type: "box", half_extents: [1, 1, 1]}, pose: pose([10, 9.5, 0])},
  ]);
  await open(page, daemon, "ccd");
  await page.check("#ov-pairs");
  // Only crate and lid overlap (their boxes); the bullet is far from both at rest.
  await page.waitForFunction(() => window.__inspector.overlays.pairs.count === 1, null, {timeout: 10000});
  await page.fill("#ccd-dt", "0.0166");
  await page.check("#ov-ccd");
  await page.waitForFunction(() => window.__inspector.overlays.ccd.count === 1, null, {timeout: 10000});
  await settled(page);
  const o = await state(page, () => window.__inspector.overlays);
  if (o.ccd.arrows !== 1 || o.contacts.arrows !== 0)
    throw new Error("CCD overlay: " + JSON.stringify(o.ccd) + ", contacts " + JSON.stringify(o.contacts));
  await shot(page, "pairs-ccd");
});

check("overlap and sweep queries are drawn with what they hit", async ({page, daemon}) => {
  await open(page, daemon, "scene");
  await page.fill("#query-body", JSON.stringify({shape: {type: "sphere", radius: 0.5}, pose: {position: [4, 0, 0]}}));
  await page.click("#query-overlap");
  await page.waitForFunction(() => window.__inspector.queryHits.length > 0, null, {timeout: 10000});
  const hits = await state(page, () => window.__inspector.queryHits);
  if (JSON.stringify(hits) !== JSON.stringify(["ball"]))
    throw new Error("overlap at the ball's centre found " + hits);
  // From x = -10 along +x by 20: the pill's side is at x = -4.5, so a sphere
  // of 0.5 stops at x = -5, a quarter of the way.
  await page.fill("#query-body", JSON.stringify({shape: {type: "sphere", radius: 0.5}, pose: {position: [-10, 0, 0]},
    translation: [20, 0, 0]}));
  await page.click("#query-sweep");
  await page.waitForFunction(() => window.__inspector.queryHits[0] === "pill", null, {timeout: 10000});
  const text = await page.textContent("#query-result");
  const time = Number(/at time ([0-9.e-]+)/.exec(text)[1]);
  if (Math.abs(time - 0.25) > 1e-6)
    throw new Error("the sweep says: " + text);
  await settled(page);
  await shot(page, "sweep");
});

check("the fallback log names its pairs and outlines them", async ({page, daemon}) => {
  // GJK capped at one iteration cannot decide two overlapping hulls (as
  // tests/e2e/test_metrics.py): one contacts call logs the pair.
  // Icosahedra (20 faces): small solid hulls take the SAT, which needs no
  // GJK when they overlap.
  const g = (1 + Math.sqrt(5)) / 2;
  const points = [];
  for (const s1 of [-1, 1])
    for (const s2 of [-1, 1])
      points.push([0, s1, s2 * g], [s1, s2 * g, 0], [s2 * g, 0, s1]);
  const hull = {type: "convex", points};
  await http(daemon, "PUT", "/v1/worlds/fb", {settings: {skin: 0, gjk_max_iterations: 1}, shapes: [
    {id: "h1", shape: hull, pose: pose([0, 0, 0])}, {id: "h2", shape: hull, pose: pose([0.5, 0.3, 0.2])}]});
  await http(daemon, "POST", "/v1/worlds/fb/contacts", {});
  const logged = (await http(daemon, "GET", "/metrics/fallbacks")).fallbacks.filter((f) => f.world === "fb");
  if (!logged.length)
    throw new Error("the setup logged no fallback");
  await open(page, daemon, "fb");
  await page.check("#ov-fallbacks");
  await page.waitForFunction(() => window.__inspector.overlays.fallbacks.count === 2, null, {timeout: 10000});
  const rows = await page.$$eval("#fallbacks tr.here", (trs) => trs.map((t) => [t.cells[2].textContent, t.cells[3].textContent]));
  if (rows.length !== logged.length || rows.some(([a, b]) => a !== "h1" || b !== "h2"))
    throw new Error("rows of this world: " + JSON.stringify(rows));
  await settled(page);
  await shot(page, "fallbacks");
});

async function tokenCheck(ctx) {
  const token = "inspector-secret";
  const daemon = await startDaemon(ctx.binary, ["--token", token]);
  try {
    await seed(daemon, "scene", SCENE, token);
    const page = await ctx.browser.newPage({viewport: {width: 1200, height: 800}});
    await page.goto(daemon.base + "/inspect/#world=scene");
    await page.waitForSelector("#token-prompt:not([hidden])", {timeout: 10000});
    await page.screenshot({path: join(outDir, "token-prompt.png")});
    const drawn = await state(page, () => window.__inspector.instances);
    if (drawn !== 0)
      throw new Error("the world is drawn before the token was given");
    await page.fill("#token-input", token);
    await page.click("#token-form button");
    await settled(page);
    const s = await state(page, () => ({drawn: window.__inspector.instances, kept: sessionStorage.getItem("collisiond.token")}));
    if (s.drawn !== SCENE.length || s.kept !== token)
      throw new Error("after the token: " + JSON.stringify(s));
    await page.screenshot({path: join(outDir, "token-world.png")});
    await page.close();
  } finally {
    await daemon.stop();
  }
}

async function main() {
  const daemon = await startDaemon(binary);
  const b = await browser();
  let passed = 0, failed = 0;
  const run = async (name, fn) => {
    try {
      await fn();
      passed++;
      console.log("ok   " + name);
    } catch (e) {
      failed++;
      console.log("FAIL " + name + ": " + e.message);
    }
  };
  try {
    for (const c of checks) {
      const page = await b.newPage({viewport: {width: 1200, height: 800}, deviceScaleFactor: 1});
      const errors = [];
      page.on("pageerror", (e) => errors.push(e.message));
      page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
      await run(c.name, async () => {
        await c.fn({page, daemon});
        if (errors.length)
          throw new Error("the page logged errors: " + errors.join("; "));
      });
      await page.close();
    }
    await run("a daemon with a token prompts for it, then shows the world", () =>
      tokenCheck({binary, browser: b}));
  } finally {
    await b.close();
    await daemon.stop();
  }
  writeFileSync(join(outDir, "summary.txt"), passed + " passed, " + failed + " failed\n");
  console.log("screenshots in " + outDir);
  console.log(passed + " passed, " + failed + " failed");
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
