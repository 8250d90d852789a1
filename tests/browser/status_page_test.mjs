// Browser test of the status page of `ferry run` (ctest: status_page_browser_test, label
// integration). Headless Chromium from Debian (/usr/bin/chromium) driven by puppeteer-core
// (pinned in package.json, installed by `make setup-npm`); ferry, its mock Kafka cluster and
// chromium are started here and never outlive the test (each is spawned under
// `setpriv --pdeathsig KILL`, and killed on every exit path).
//
//   node status_page_test.mjs FERRY_BINARY ARTIFACT_DIR
//
// 1. A pipeline with basic auth and a rate limit: the page loads with no console error and no
//    request to another origin, shows the pipeline and both partitions; after 2,000 more messages
//    a partition's lag shows above 0, then every lag falls to 0 as the pipeline catches up.
//    /api/status (full and ?since=) validates against status_api.schema.json (ajv); /metrics and
//    the page answer 401 without the credentials, /health/live 200; `t` switches the theme;
//    `ferry status --watch` shows the same pipeline and partitions in the terminal.
// 2. A pipeline that fails on a malformed message (on_bad_record = "fail"), served over TLS with
//    linger_after_failure: the page shows the state "failed" and the error naming the offset.
// Screenshots (light, dark, phone, failed) go to ARTIFACT_DIR; with FERRY_UPDATE_DOCS=1 the light
// and dark ones are also written to docs/images/ (the screenshots docs/running.md shows).
// Exit codes: 0 passed, 1 failed, 77 skipped (no chromium installed: `make setup` installs it).
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const CHROMIUM = '/usr/bin/chromium';
const here = path.dirname(fileURLToPath(import.meta.url));
const [ferry, artifacts] = process.argv.slice(2);
if (!ferry || !artifacts) {
  console.error('usage: node status_page_test.mjs FERRY_BINARY ARTIFACT_DIR');
  process.exit(2);
}
if (!fs.existsSync(CHROMIUM)) {
  console.error('\n' + '*'.repeat(78) + `\nSKIPPED: ${CHROMIUM} is not installed, so the status page was NOT tested in a browser.\n` +
                'Install it with `make setup` (Debian package chromium).\n' + '*'.repeat(78) + '\n');
  process.exit(77);
}
let puppeteer, Ajv2020;
try {
  puppeteer = (await import('puppeteer-core')).default;
  Ajv2020 = (await import('ajv/dist/2020.js')).default;
} catch (e) {
  console.error(`tests/browser/node_modules is missing or broken (${e.message}): run \`make setup-npm\``);
  process.exit(1);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ferry-status-page-'));
fs.mkdirSync(artifacts, {recursive: true});
const children = new Set();
let browser = null;
let passed = 0;
const failures = [];

function cleanup() {
  for (const c of children) {
    try { c.kill('SIGKILL'); } catch (e) { /* gone */ }
  }
  children.clear();
  fs.rmSync(dir, {recursive: true, force: true});
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => process.exit(1));

// A child that dies with this process (PR_SET_PDEATHSIG), whose output is kept.
function start(args, {stdin = 'ignore', name} = {}) {
  const c = spawn('setpriv', ['--pdeathsig', 'KILL', ...args], {stdio: [stdin, 'pipe', 'pipe']});
  c.out = '';
  c.err = '';
  c.stdout.on('data', (d) => { c.out += d; });
  c.stderr.on('data', (d) => { c.err += d; });
  c.exited = new Promise((resolve) => c.on('exit', (code, signal) => { children.delete(c); resolve({code, signal}); }));
  c.name = name || path.basename(args[0]);
  children.add(c);
  return c;
}
function run(args) {
  return execFileSync(args[0], args.slice(1), {encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120000});
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Waits for `probe()` to return a truthy value; fails with `what` after `seconds` (a generous
// deadline for a slow machine, not a measured threshold).
async function until(what, probe, seconds = 90) {
  const deadline = Date.now() + seconds * 1000;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await probe();
      if (last) return last;
    } catch (e) { last = e.message; }
    await sleep(250);
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}
function check(cond, what) {
  if (!cond) throw new Error(what);
}
async function step(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok: ${name}`);
  } catch (e) {
    failures.push(`${name}: ${e.stack || e}`);
    console.log(`FAILED: ${name}: ${e.message}`);
  }
}
function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

let mocks = 0;
async function startMock(topics) {
  const bootstrap = path.join(dir, `bootstrap-${++mocks}`);
  const mock = start([ferry, 'mock-kafka', '--brokers', '1', ...topics.flatMap((t) => ['--topic', t]),
                      '--bootstrap-file', bootstrap, '--exit-on-eof'], {stdin: 'pipe', name: 'mock-kafka'});
  const brokers = await until('the mock cluster', () => fs.existsSync(bootstrap) && fs.readFileSync(bootstrap, 'utf8').trim(), 30);
  return {mock, brokers};
}
function produce(brokers, topic, count, startSeq, template = '{"id": {{seq}}, "payload": "message #{{seq}}"}') {
  run([ferry, 'produce', 'kafka', '--brokers', brokers, '--topic', topic, '--count', String(count),
       '--start', String(startSeq), '--key', 'k{{seq}}', '--template', template]);
}
function startFerry(config) {
  const f = start([ferry, 'run', '--config', config], {name: 'ferry run'});
  return f;
}
async function pageUrl(f) {
  return until('ferry run to serve its status page', () => {
    const m = /status page on (https?:\/\/[^ \n]+\/)/.exec(f.err);
    if (f.exitCode !== null) throw new Error(`ferry run exited: ${f.err}`);
    return m && m[1];
  }, 60);
}

async function openPage(url, {auth} = {}) {
  const page = await browser.newPage();
  page.problems = [];
  const origin = new URL(url).origin;
  page.on('console', (m) => { if (m.type() === 'error') page.problems.push(`console error: ${m.text()}`); });
  page.on('pageerror', (e) => page.problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) page.problems.push(`request to another origin: ${r.url()}`);
  });
  if (auth) await page.authenticate(auth);
  await page.setViewport({width: 1280, height: 900});
  await page.goto(url, {waitUntil: 'load'});
  return page;
}
const lagCells = (page, pipeline) => page.$$eval(`[data-pipeline="${pipeline}"] tr[data-partition] [data-field="lag_messages"]`,
                                                 (cells) => cells.map((c) => Number(c.textContent.replace(/,/g, ''))));

async function scenarioCatchUp() {
  const {mock, brokers} = await startMock(['events:2']);
  produce(brokers, 'events', 20, 1);
  produce(brokers, 'events', 1, 21, 'not json {{seq}}');  // one bad record, skipped
  const port = await freePort();
  const config = path.join(dir, 'catchup.toml');
  fs.writeFileSync(config, `
[metrics]
listen = "127.0.0.1:${port}"
username = "ops"
password = "page-secret"

[[pipeline]]
id = "events"
table = "${dir}/events"
schema = "id BIGINT NOT NULL, payload STRING"
on_bad_record = "skip"

[pipeline.kafka]
brokers = "${brokers}"
topics = ["events"]
group_id = "status-page-test"
start = "earliest"
max_rate_per_partition = 100
properties = { "session.timeout.ms" = "6000", "heartbeat.interval.ms" = "500" }

[pipeline.batch]
max_rows = 200
max_latency = "200ms"
`);
  const f = startFerry(config);
  const url = await pageUrl(f);
  const auth = {username: 'ops', password: 'page-secret'};
  const authHeader = {Authorization: 'Basic ' + Buffer.from('ops:page-secret').toString('base64')};
  let page;

  await step('the page loads and shows the pipeline and both partitions', async () => {
    page = await openPage(url, {auth});
    await page.waitForSelector('[data-pipeline="events"] h2', {timeout: 60000});
    for (const p of ['kafka/events/0', 'kafka/events/1']) {
      await page.waitForSelector(`[data-pipeline="events"] tr[data-partition="${p}"]`, {timeout: 60000});
    }
    check((await page.$eval('[data-pipeline="events"] h2', (e) => e.textContent)) === 'events', 'pipeline heading');
    check((await page.$eval('[data-pipeline="events"] .where', (e) => e.textContent)).includes('kafka events'), 'source shown');
    // The data rate in the unit that fits it ("1.4 kB/s", not "0.0014 MB/s").
    const rate = await page.$eval('[data-pipeline="events"] [data-card="Data committed"] .big', (e) => e.textContent);
    const m = /^([0-9][0-9.,]*) (B|kB|MB|GB|TB)\/s$/.exec(rate);
    check(rate === '–' || (m !== null && (m[2] === 'B' || Number(m[1].replace(/,/g, '')) >= 1)),
          `data rate shown in a fitting unit: ${rate}`);
  });
  await step('the lag shows above 0 after more messages, then falls to 0 as the pipeline catches up', async () => {
    await until('the first 21 messages to be caught up', async () => (await lagCells(page, 'events')).every((v) => v === 0));
    produce(brokers, 'events', 2000, 100);
    const seen = await until('a lag above 0 on the page', async () => (await lagCells(page, 'events')).find((v) => v > 0));
    console.log(`  lag seen on the page: ${seen}`);
    await until('every lag to fall to 0', async () => {
      const lags = await lagCells(page, 'events');
      return lags.length === 2 && lags.every((v) => v === 0);
    }, 180);
    const state = await page.$eval('[data-pipeline="events"] [data-field="state"]', (e) => e.textContent);
    check(state === 'running', `state after catching up: ${state}`);
    const pauses = await page.$$eval('[data-pipeline="events"] [data-field="rate_limit_pauses"]', (c) => c.map((x) => Number(x.textContent.replace(/,/g, ''))));
    check(pauses.some((v) => v > 0), `rate-limit pauses shown: ${pauses}`);
    const committed = await page.$$eval('[data-pipeline="events"] [data-field="committed"]', (c) => c.map((x) => x.textContent));
    check(committed.every((v) => v !== '–'), `committed positions: ${committed}`);
    await page.waitForFunction(() => document.querySelector('[data-block="commits"] tbody tr') !== null, {timeout: 30000});
    await page.waitForFunction(() => /malformed|not json|wrong_type|other/.test(document.querySelector('[data-block="bad"]').textContent), {timeout: 30000});
  });
  await step('screenshots: light, dark, phone', async () => {
    await sleep(1500);  // one more refresh, so the charts hold the last second too
    await page.emulateMediaFeatures([{name: 'prefers-color-scheme', value: 'light'}]);
    await page.screenshot({path: path.join(artifacts, 'status-page-light.png'), fullPage: true});
    await page.emulateMediaFeatures([{name: 'prefers-color-scheme', value: 'dark'}]);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    check(bg !== 'rgb(255, 255, 255)', `dark theme background: ${bg}`);
    await page.screenshot({path: path.join(artifacts, 'status-page-dark.png'), fullPage: true});
    await page.setViewport({width: 390, height: 844, isMobile: true, deviceScaleFactor: 2});
    await sleep(300);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    check(overflow <= 1, `the page is wider than a phone by ${overflow}px`);
    await page.screenshot({path: path.join(artifacts, 'status-page-phone.png'), fullPage: true});
    await page.setViewport({width: 1280, height: 900});
    await page.emulateMediaFeatures([{name: 'prefers-color-scheme', value: 'light'}]);
    if (process.env.FERRY_UPDATE_DOCS === '1') {
      const docs = path.join(here, '..', '..', 'docs', 'images');
      fs.mkdirSync(docs, {recursive: true});
      for (const n of ['status-page-light.png', 'status-page-dark.png']) fs.copyFileSync(path.join(artifacts, n), path.join(docs, n));
    }
  });
  await step('keyboard: Tab reaches the controls, t switches the theme, p pauses', async () => {
    await page.keyboard.press('Tab');  // the skip link
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement.id);
    check(focused === 'pause', `second Tab focuses ${focused}`);
    await page.keyboard.press('t');
    check(await page.evaluate(() => document.documentElement.dataset.theme) === 'light', 't: light');
    await page.keyboard.press('t');
    check(await page.evaluate(() => document.documentElement.dataset.theme) === 'dark', 't: dark');
    await page.keyboard.press('t');
    await page.keyboard.press('p');
    check(await page.$eval('#pause', (b) => b.getAttribute('aria-pressed')) === 'true', 'p pauses');
    await page.keyboard.press('p');
  });
  await step('/api/status validates against its JSON Schema, in full and with ?since=', async () => {
    const schema = JSON.parse(fs.readFileSync(path.join(here, '..', '..', 'src', 'ferry', 'app', 'status_page', 'status_api.schema.json'), 'utf8'));
    const validate = new Ajv2020({allErrors: true, strict: true}).compile(schema);
    const full = await (await fetch(`${url}api/status`, {headers: authHeader})).json();
    check(validate(full), `full answer: ${JSON.stringify(validate.errors)}`);
    check(full.pipelines[0].partitions.length === 2, 'two partitions');
    check(full.pipelines[0].commits.length > 0, 'commits listed');
    check(full.pipelines[0].bad_records.samples.length === 1 && !('payload' in full.pipelines[0].bad_records.samples[0]), 'bad record without payload');
    check(full.pipelines[0].table.version > 0 && full.pipelines[0].table.files > 0, 'table figures');
    await sleep(1200);
    const delta = await (await fetch(`${url}api/status?since=${full.history.next_tick}`, {headers: authHeader})).json();
    check(validate(delta), `?since answer: ${JSON.stringify(validate.errors)}`);
    check(delta.history.first_tick === full.history.next_tick, 'since: starts where the last answer ended');
    check(delta.pipelines[0].series.rows_per_s.length === delta.history.times_ms.length, 'series as long as the times');
    const served = await (await fetch(`${url}status_api.schema.json`, {headers: authHeader})).json();
    check(served.title === schema.title, 'the schema is served beside the API');
  });
  await step('basic auth: 401 without credentials on the page, the API and /metrics; health open', async () => {
    for (const p of ['', 'api/status', 'metrics']) {
      const r = await fetch(`${url}${p}`);
      check(r.status === 401, `${p || '/'} without credentials: ${r.status}`);
      check((r.headers.get('www-authenticate') || '').startsWith('Basic'), 'WWW-Authenticate');
    }
    check((await fetch(`${url}metrics`, {headers: authHeader})).status === 200, '/metrics with credentials');
    check((await fetch(`${url}health/live`)).status === 200, '/health/live without credentials');
  });
  await step('ferry status --watch shows the pipeline and its partitions in the terminal', async () => {
    const out = run([ferry, 'status', '--config', config, '--watch', '--count', '2', '--interval', '500ms']);
    for (const want of ['events  [running]', 'kafka/events/0', 'kafka/events/1', 'rows/s', 'last commit v']) {
      check(out.includes(want), `--watch output lacks "${want}":\n${out}`);
    }
    check(!out.includes('not reachable'), `--watch did not reach ferry run:\n${out}`);
  });
  await step('no console error, failed request or request to another origin', async () => {
    check(page.problems.length === 0, page.problems.join('\n'));
  });
  await page.close();
  f.kill('SIGTERM');
  const {code} = await f.exited;
  check(code === 0, `ferry run exited ${code}: ${f.err.slice(-2000)}`);
  mock.stdin.end();  // --exit-on-eof
  await mock.exited;
}

async function scenarioFailure() {
  const {mock, brokers} = await startMock(['orders:1']);
  produce(brokers, 'orders', 5, 1);
  produce(brokers, 'orders', 1, 6, '{"id": "not a number {{seq}}"}');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'key.pem'),
                           '-out', path.join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1',
                           '-addext', 'subjectAltName=IP:127.0.0.1'], {stdio: 'ignore'});
  const config = path.join(dir, 'failure.toml');
  fs.writeFileSync(config, `
[metrics]
listen = "127.0.0.1:0"
tls_cert = "${dir}/cert.pem"
tls_key = "${dir}/key.pem"
linger_after_failure = "10m"

[[pipeline]]
id = "orders"
table = "${dir}/orders"
schema = "id BIGINT NOT NULL"
on_bad_record = "fail"

[pipeline.kafka]
brokers = "${brokers}"
topics = ["orders"]
group_id = "status-page-test-failure"
start = "earliest"
properties = { "session.timeout.ms" = "6000", "heartbeat.interval.ms" = "500" }

[pipeline.batch]
max_latency = "200ms"
`);
  const f = startFerry(config);
  const url = await pageUrl(f);
  let page;
  await step('over TLS, a failed pipeline shows the state "failed" and its error', async () => {
    check(url.startsWith('https://'), `served over ${url}`);
    page = await openPage(url);
    await page.waitForSelector('[data-pipeline="orders"] .state.failed', {timeout: 90000});
    const error = await page.$eval('[data-pipeline="orders"] [data-field="error"]', (e) => e.textContent);
    check(error.includes('topic orders partition 0 offset 5'), `error text: ${error}`);
    await page.screenshot({path: path.join(artifacts, 'status-page-failed.png'), fullPage: true});
    check(page.problems.length === 0, page.problems.join('\n'));
  });
  if (page) await page.close();
  f.kill('SIGTERM');
  const {code} = await f.exited;
  check(code === 1, `ferry run after a failed pipeline exited ${code} (expected 1)`);
  mock.stdin.end();
  await mock.exited;
}

try {
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    acceptInsecureCerts: true,  // scenario 2's self-signed certificate
    userDataDir: path.join(dir, 'chromium-profile'),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  children.add(browser.process());
  await step('scenario 1 (catching up)', scenarioCatchUp);
  await step('scenario 2 (failure over TLS)', scenarioFailure);
} catch (e) {
  failures.push(`setup: ${e.stack || e}`);
} finally {
  if (browser) await browser.close().catch(() => {});
}
console.log(`screenshots in ${artifacts}`);
for (const f of failures) console.log(`\nFAILED ${f}`);
console.log(`${passed} passed, ${failures.length} failed`);
process.exit(failures.length === 0 ? 0 : 1);
