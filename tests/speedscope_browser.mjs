// speedscope_browser.mjs - tests/speedscope.test's browser side: serves the
// speedscope app of the npm package and the given profiles from 127.0.0.1
// (an ephemeral port, closed whatever happens), opens each profile in
// headless chromium driven by puppeteer-core, and prints for each
//   load NAME ERRORS TITLE       the console errors and page errors seen
//   frame NAME SYMBOL TOTAL_NS SELF_NS   the sandwich view's rows
// Usage: node speedscope_browser.mjs NODE_MODULES CHROMIUM SHOT_DIR FILE...
import { createRequire } from 'module';
import http from 'http';
import fs from 'fs';
import path from 'path';

const [nodeModules, chromium, shotDir, ...files] = process.argv.slice(2);
const require = createRequire(path.resolve(nodeModules) + '/');
const puppeteer = require('puppeteer-core');
const app = path.join(nodeModules, 'speedscope', 'dist', 'release');

const server = http.createServer((req, res) => {
  const u = decodeURIComponent(new URL(req.url, 'http://x').pathname);
  const i = u.startsWith('/profile/') ? Number(u.slice(9)) : -1;
  const f = i >= 0 ? files[i] : path.join(app, path.normalize(u === '/' ? '/index.html' : u));
  fs.readFile(f || '', (e, d) => {
    if (e) {
      res.writeHead(404);
      res.end();
    } else {
      res.writeHead(200);
      res.end(d);
    }
  });
});

const units = { ns: 1, 'µs': 1e3, us: 1e3, ms: 1e6, s: 1e9, min: 60e9, h: 3600e9 };
function ns(text) {     // "118.00ms (98%)" -> 118000000; a plain number ("none" unit) as it is
  const m = /^\s*([\d.]+)\s*([a-zµ]*)/.exec(text);
  return m ? Number(m[1]) * (units[m[2]] || 1) : NaN;
}

let browser;
let status = 0;
try {
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const base = `http://127.0.0.1:${server.address().port}`;
  browser = await puppeteer.launch({ executablePath: chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--enable-unsafe-swiftshader'] });
  for (let i = 0; i < files.length; i++) {
    const name = path.basename(files[i]);
    const page = await browser.newPage();
    await page.setViewport({ width: 1400, height: 4000 });
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(`${base}/profile/${i}`)}`);
    // loaded: the title names the profile, the view switcher is there
    await page.waitForFunction(() => / - speedscope$/.test(document.title) && document.body.innerText.includes('Sandwich'),
      { timeout: 60000 }).catch((e) => errors.push('not loaded: ' + e.message));
    await page.keyboard.press('3');                       // the sandwich view: per-frame totals
    await page.waitForFunction(() => document.body.innerText.includes('Symbol Name'), { timeout: 20000 })
      .catch((e) => errors.push('no sandwich view: ' + e.message));
    // the table's rows come after its heading, a frame or more later on a busy machine: read it once
    // it has rows and stays the same for half a second
    let text = '';
    for (let tries = 0; tries < 80; tries++) {
      const now = await page.evaluate(() => document.body.innerText);
      const at = now.indexOf('Symbol Name');
      if (at >= 0 && /\d/.test(now.slice(at)) && now === text) break;
      text = now;
      await new Promise((ok) => setTimeout(ok, 500));
    }
    await page.screenshot({ path: path.join(shotDir, `${name}.png`) });
    console.log(`load ${name} ${errors.length} ${JSON.stringify(await page.title())}`);
    for (const e of errors) console.log(`# ${name}: ${e.slice(0, 300)}`);
    const lines = text.split('\n').map((l) => l.trim()).filter((l) => l);
    const at = lines.findIndex((l) => l.endsWith('Symbol Name'));
    for (let j = at + 1; at >= 0 && j + 2 < lines.length + 1; j += 3) {
      const total = ns(lines[j]), self = ns(lines[j + 1]);
      if (Number.isNaN(total) || Number.isNaN(self) || lines[j + 2] === undefined) break;
      console.log(`frame ${name} ${lines[j + 2].replace(/\s/g, '_')} ${total} ${self}`);
    }
    await page.close();
  }
} catch (e) {
  console.log(`# ${e.stack || e}`);
  status = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
  server.close();
}
process.exit(status);
