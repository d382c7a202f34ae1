// The inspector with a 10,000-box world (docs/INSPECTOR.md, "Performance"):
// loads it in headless Chromium, asks for live refresh (20 Hz unless told) while a
// game loop here moves every box, and prints the page's own counters
// (load time, refreshes per second, the last refresh's duration). It checks
// behaviour only (every box drawn, refreshes moved them without a rebuild);
// the figures are reported, not asserted, as they depend on the machine.
//
//   node tests/inspector/perf.mjs build/collisiond [SHAPES [RATE_HZ]]
import {browser, http, settled, startDaemon} from "./lib.mjs";

const [binary, count = "10000", rate = "20"] = process.argv.slice(2);
const N = Number(count);
const side = Math.ceil(Math.cbrt(N));
const at = (i, t) => [(i % side) * 3 + Math.sin(t + i) * 0.5, Math.floor(i / side) % side * 3,
  Math.floor(i / side / side) * 3];

async function main() {
  const daemon = await startDaemon(binary);
  const b = await browser();
  let failed = false;
  try {
    const boxes = Array.from({length: N}, (_, i) => ({id: "box-" + i, shape: {type: "box", half_extents: [1, 1, 1]},
      pose: {position: at(i, 0)}, layer: 1 << (i % 4)}));
    await http(daemon, "PUT", "/v1/worlds/big", {});
    await http(daemon, "POST", "/v1/worlds/big/batch", {upsert: boxes});
    const t0 = performance.now();
    const r = await fetch(daemon.base + "/v1/worlds/big/export");
    const bytes = (await r.arrayBuffer()).byteLength;
    const exportMs = performance.now() - t0;

    const page = await b.newPage({viewport: {width: 1200, height: 800}});
    await page.goto(daemon.base + "/inspect/#world=big");
    await settled(page, 60000);
    const load = await page.evaluate(() => ({ms: window.__inspector.loadMs, drawn: window.__inspector.instances,
      calls: window.__inspector.drawCalls}));

    // A game loop: every box moves each 50 ms while the page refreshes live.
    let moving = true, t = 0, moves = 0;
    const game = (async () => {
      while (moving) {
        t += 0.05;
        await http(daemon, "POST", "/v1/worlds/big/batch",
          {move: boxes.map((x, i) => ({id: x.id, pose: {position: at(i, t)}}))});
        moves++;
        await new Promise((ok) => setTimeout(ok, 50));
      }
    })();
    await page.selectOption("#rate", rate);
    await page.waitForTimeout(5000);
    const live = await page.evaluate(() => ({hz: window.__inspector.refreshHz, last: window.__inspector.lastRefreshMs,
      refreshes: window.__inspector.refreshes, rebuilds: window.__inspector.rebuilds}));
    moving = false;
    await game;
    await page.selectOption("#rate", "0");

    console.log("export of " + N + " boxes: " + bytes + " bytes in " + exportMs.toFixed(0) + " ms (from node)");
    console.log("load: " + load.ms.toFixed(0) + " ms to the first frame, " + load.drawn + " instances in " + load.calls +
      " draw calls");
    console.log("live at " + rate + " Hz asked: " + live.hz.toFixed(1) + " refreshes/s, last " + live.last.toFixed(0) + " ms, " +
      live.refreshes + " refreshes, " + live.rebuilds + " scene build(s), " + moves + " game ticks meanwhile");
    if (load.drawn !== N || live.refreshes < 2 || live.rebuilds !== 1) {
      console.log("FAIL: expected " + N + " instances, refreshes, and one build only");
      failed = true;
    }
  } finally {
    await b.close();
    await daemon.stop();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
