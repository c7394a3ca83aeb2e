// Drives the fluxsim review HTML report in headless Chromium as a person would: typing in
// the filter box, stepping with j/k, switching views and themes. Exits non-zero on the
// first thing that does not hold.
//
//   node check.mjs REPORT.html [CHROMIUM] [DARK_SCREENSHOT.png] [DIFF_SCREENSHOT.png]
import { chromium } from 'playwright-core';
import { pathToFileURL } from 'node:url';

const [report, executablePath = '/usr/bin/chromium', darkShot, diffShot] = process.argv.slice(2);
if (!report) {
  console.error('usage: node check.mjs REPORT.html [CHROMIUM] [DARK.png] [DIFF.png]');
  process.exit(2);
}

function check(cond, what) {
  if (!cond) {
    throw new Error(`check failed: ${what}`);
  }
  console.log(`ok - ${what}`);
}

const browser = await chromium.launch({
  executablePath,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const requests = [];
  page.on('request', (r) => { if (!r.url().startsWith('file:')) requests.push(r.url()); });
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(pathToFileURL(report).href);

  const total = await page.locator('#nav li.leaf').count();
  const count = () => page.locator('#count').textContent();
  const shownLeaves = () => page.locator('#nav li.leaf:not([hidden])').count();
  check(total > 0 && (await count()) === `${total} of ${total} shown`, `all ${total} entries listed`);

  // The filter box: typing narrows the tree and the page.
  await page.fill('#filter', 'redis');
  check((await count()) === `1 of ${total} shown`, 'typing "redis" leaves one entry');
  check((await shownLeaves()) === 1, 'one leaf in the tree');
  check((await page.locator('article.obj:not([hidden])').count()) === 1, 'one object in the page');
  check(await page.locator('article.obj:not([hidden]) h4').textContent().then((t) => t.includes('redis-master')),
    'the object shown is redis-master');
  await page.fill('#filter', 'podinfo added');
  check((await shownLeaves()) === 3, 'words narrow together: podinfo and added');
  await page.press('#filter', 'Escape');
  check((await count()) === `${total} of ${total} shown`, 'Escape clears the filter');

  // Keys: / focuses the filter, j and k step through the entries.
  await page.locator('main h2').first().click();
  await page.keyboard.press('/');
  check(await page.evaluate(() => document.activeElement.id === 'filter'), '/ focuses the filter');
  await page.keyboard.press('Escape');
  await page.keyboard.press('j');
  const current = () => page.evaluate(() => {
    const li = document.querySelector('#nav li.leaf.current');
    return li ? li.getAttribute('data-ref') : null;
  });
  const first = await current();
  check(first !== null, 'j selects the first entry');
  check(await page.evaluate((id) => document.getElementById(id).classList.contains('current'), first),
    'and marks it in the page');
  await page.keyboard.press('j');
  const second = await current();
  check(second !== null && second !== first, 'j moves to the next entry');
  await page.keyboard.press('k');
  check((await current()) === first, 'k moves back');

  // Views: side by side, unified.
  const display = (sel) => page.evaluate((s) => getComputedStyle(document.querySelector(s)).display, sel);
  check((await display('.view-split')) !== 'none' && (await display('.view-unified')) === 'none',
    'side by side by default');
  await page.click('#view-unified');
  check((await display('.view-split')) === 'none' && (await display('.view-unified')) !== 'none',
    'the Unified button shows the unified view');
  await page.keyboard.press('u');
  check((await display('.view-split')) !== 'none', 'u switches back');

  // Themes: t cycles auto → dark → light.
  const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.keyboard.press('t');
  check((await bg()) === 'rgb(13, 17, 23)', 't switches to the dark theme');
  // Step to the Deployment's diff for the screenshots.
  await page.fill('#filter', 'deployment apps/podinfo changed');
  await page.keyboard.press('Enter');
  if (darkShot) {
    await page.screenshot({ path: darkShot });
    console.log(`screenshot ${darkShot}`);
  }
  await page.keyboard.press('t');
  check((await bg()) === 'rgb(255, 255, 255)', 't again switches to the light theme');
  if (diffShot) {
    await page.screenshot({ path: diffShot });
    console.log(`screenshot ${diffShot}`);
  }

  check(errors.length === 0, `no script error (${errors.join('; ')})`);
  check(requests.length === 0, `nothing fetched from the network (${requests.join(', ')})`);
} finally {
  await browser.close();
}
