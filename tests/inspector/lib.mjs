// What the browser test and the performance script share: the daemon on
// ephemeral loopback ports, HTTP calls to it, Debian's Chromium through
// playwright-core, and a PNG reader for the screenshots.
import {spawn} from "node:child_process";
import {mkdtempSync, readFileSync, existsSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {inflateSync} from "node:zlib";
import {chromium} from "playwright-core";

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** Starts collisiond with --listen 127.0.0.1:0 and waits for its port file. */
export async function startDaemon(binary, flags = []) {
  const dir = mkdtempSync(join(tmpdir(), "cq-inspector-"));
  const portFile = join(dir, "ports");
  const proc = spawn(binary, ["--listen", "127.0.0.1:0", "--stream-listen", "127.0.0.1:0", "--port-file", portFile,
    "--data-dir", "", "--threads", "2", ...flags], {stdio: ["ignore", "ignore", "pipe"]});
  let log = "";
  proc.stderr.on("data", (d) => { log += d; });
  for (let i = 0; i < 200; i++) {
    if (existsSync(portFile)) {
      const parts = readFileSync(portFile, "utf8").trim().split(/\s+/);
      if (parts.length >= 2) {
        const base = "http://127.0.0.1:" + parts[0];
        return {
          base, proc,
          log: () => log,
          stop: async () => {
            proc.kill("SIGTERM");
            await new Promise((ok) => proc.exitCode !== null ? ok() : proc.once("exit", ok));
            rmSync(dir, {recursive: true, force: true});
          },
        };
      }
    }
    if (proc.exitCode !== null)
      break;
    await sleep(50);
  }
  proc.kill("SIGKILL");
  throw new Error("collisiond wrote no port file: " + log);
}

/** One JSON call; throws on a status other than the expected ones. */
export async function http(daemon, method, path, body, token) {
  const headers = {"Content-Type": "application/json"};
  if (token)
    headers.Authorization = "Bearer " + token;
  const r = await fetch(daemon.base + path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  const text = await r.text();
  if (!r.ok)
    throw new Error(method + " " + path + ": " + r.status + " " + text);
  return text ? JSON.parse(text) : null;
}

/** Headless Chromium from Debian; --no-sandbox only when run as root. */
export async function browser() {
  const args = ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"];
  if (process.getuid && process.getuid() === 0)
    args.push("--no-sandbox");
  return chromium.launch({executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true, args});
}

/** Waits until the page has loaded its world and nothing is in flight. */
export async function settled(page, timeout = 30000) {
  await page.waitForFunction(() => window.__inspector && window.__inspector.ready, null, {timeout});
  // Two frames, so what the state says is on the canvas.
  await page.evaluate(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))));
}

/** Decodes an 8-bit, non-interlaced RGB or RGBA PNG: {width, height, pixel(x, y) -> [r, g, b]}. */
export function readPng(buf) {
  let at = 8, width = 0, height = 0, type = 0;
  const idat = [];
  while (at < buf.length) {
    const len = buf.readUInt32BE(at);
    const name = buf.toString("latin1", at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (name === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      type = data[9];
      if (data[8] !== 8 || data[12] !== 0 || (type !== 2 && type !== 6))
        throw new Error("unsupported PNG");
    } else if (name === "IDAT") {
      idat.push(data);
    }
    at += 12 + len;
  }
  const bpp = type === 6 ? 4 : 3;
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * bpp;
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    for (let x = 0; x < stride; x++) {
      const a = x >= bpp ? out[y * stride + x - bpp] : 0;
      const b = y > 0 ? out[(y - 1) * stride + x] : 0;
      const c = x >= bpp && y > 0 ? out[(y - 1) * stride + x - bpp] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const pred = [0, a, b, (a + b) >> 1, pa <= pb && pa <= pc ? a : pb <= pc ? b : c][f];
      out[y * stride + x] = (raw[src + x] + pred) & 255;
    }
  }
  return {width, height, pixel: (x, y) => [0, 1, 2].map((k) => out[(y * width + x) * bpp + k])};
}

/** Where a world point lands on the page, in CSS pixels, by the page's camera. */
export function project(cam, p) {
  const mul = (m, v) => [0, 1, 2, 3].map((r) => m[r] * v[0] + m[4 + r] * v[1] + m[8 + r] * v[2] + m[12 + r] * v[3]);
  const c = mul(cam.projection, mul(cam.view, [p[0], p[1], p[2], 1]));
  const nx = c[0] / c[3], ny = c[1] / c[3];
  return [cam.canvas.left + ((nx + 1) / 2) * cam.canvas.width, cam.canvas.top + ((1 - ny) / 2) * cam.canvas.height];
}
