// report_browser.mjs - tests/report.test's browser side: opens each report
// page from disk (file://, no server: the page must need no network) in
// headless chromium driven by puppeteer-core, and prints for each
//   load NAME ERRORS REQUESTS     console and page errors; requests not to file://
//   gapmarks NAME N               the coverage timeline's loss marks
//   root NAME VALUE WIDTH SVGWIDTH   the flame graph's bottom frame
//   zoom NAME FRAME WIDTH (was W) after a click on FRAME (the widest frame narrower than 900 px): it is
//                                 the bottom frame (else WRONG:name), WIDTH wide
//   search NAME TERM N ALL        frames highlighted for TERM; ALL 1 if each one's name holds TERM
// and saves a screenshot SHOT_DIR/NAME.png.
// Usage: node report_browser.mjs NODE_MODULES CHROMIUM SHOT_DIR TERM PAGE...
import { createRequire } from 'module';
import path from 'path';

const [nodeModules, chromium, shotDir, term, ...pages] = process.argv.slice(2);
const require = createRequire(path.resolve(nodeModules) + '/');
const puppeteer = require('puppeteer-core');

let browser;
let status = 0;
try {
  browser = await puppeteer.launch({ executablePath: chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu'] });
  for (const file of pages) {
    const name = path.basename(file);
    const page = await browser.newPage();
    await page.setViewport({ width: 1100, height: 1400 });
    const errors = [];
    let requests = 0;
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests++; });
    await page.goto('file://' + path.resolve(file), { waitUntil: 'load' });
    console.log(`load ${name} ${errors.length} ${requests}`);
    for (const e of errors) console.log(`# ${name}: ${e.slice(0, 300)}`);
    console.log(`gapmarks ${name} ${await page.$$eval('#coverage .gap-mark', (e) => e.length)}`);
    const root = await page.evaluate(() => {
      const g = document.querySelector('#flame g.frame');
      return [g.dataset.name, g.dataset.value, g.querySelector('rect').getAttribute('width'),
        document.getElementById('flame').getAttribute('width')];
    });
    console.log(`root ${name} ${root[1]} ${root[2]} ${root[3]} ${root[0]}`);
    await page.screenshot({ path: path.join(shotDir, `${name}.png`), fullPage: true });
    // zoom: click the widest frame that is not already full width
    const child = await page.evaluate(() => {
      let best = null;
      [...document.querySelectorAll('#flame g.frame')].forEach((g, i) => {
        const r = g.querySelector('rect'), w = Number(r.getAttribute('width'));
        if (i > 0 && w < 900 && w > 20 && (!best || w > best[1]))
          best = [g.dataset.name, w, i];
      });
      return best;
    });
    if (child) {
      // the frame's rect clicked where it is: puppeteer scrolls it into view first (a deep
      // stack in the recording makes the graph taller than the window)
      const frames = await page.$$('#flame g.frame');
      await (await frames[child[2]].$('rect')).click();
      const after = await page.evaluate(() => {
        const g = document.querySelector('#flame g.frame');
        return [g.dataset.name, g.querySelector('rect').getAttribute('width')];
      });
      console.log(`zoom ${name} ${after[0] === child[0] ? child[0] : 'WRONG:' + after[0]} ${after[1]} (was ${child[1].toFixed(1)})`);
      await page.screenshot({ path: path.join(shotDir, `${name}.zoomed.png`), fullPage: true });
    }
    await page.type('#search', term);
    const found = await page.evaluate((t) => {
      const m = [...document.querySelectorAll('#flame g.frame.match')];
      return [m.length, m.every((g) => g.dataset.name.includes(t)) ? 1 : 0];
    }, term);
    console.log(`search ${name} ${term} ${found[0]} ${found[1]}`);
    await page.screenshot({ path: path.join(shotDir, `${name}.search.png`), fullPage: true });
    await page.close();
  }
} catch (e) {
  console.log(`# ${e.stack || e}`);
  status = 1;
} finally {
  if (browser) await browser.close().catch(() => {});
}
process.exit(status);
