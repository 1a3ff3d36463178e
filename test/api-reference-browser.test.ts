/**
 * The API reference at /docs in a real browser (Debian's chromium through playwright-core) with
 * every request outside the service's origin blocked, as on a machine without internet access
 * (docs/api.md#the-api-reference, issue 21): the operations render, search finds them, a deep link scrolls to its
 * operation, and nothing is asked of another origin. It also measures what the page weighs
 * (docs/decisions/0018-api-reference-redoc.md quotes the figures).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './helpers/browser.js';
import { auditAtDeskAndPhone } from './helpers/axe.js';
import { startTestApp, type TestContext, storeIndependent } from './helpers/harness.js';

describe('the API reference in a browser, offline', { skip: storeIndependent }, () => {
  let ctx: TestContext;
  let browser: Browser;
  let base: string;
  /** The DOM id (and deep link) Redoc gives POST /payment/create, read from the rendered page. */
  let operationId = '';
  /** Redoc's id of an operation without operationId: tag/<tag>/paths/<JSON-pointer-escaped path>/<method>. */
  const createPaymentSuffix = '/paths/~1api~1services~1v1~1payment~1create/post';
  /** Every network request a page made that left the service's origin (each was blocked). */
  const outside: string[] = [];
  /**
   * The page the first test loads; the audit and the search use it as it is, rather than loading
   * Redoc's page again each (a load of its 27,000 elements is seconds of CPU in a busy test run).
   */
  let shared: { context: BrowserContext; page: Page } | undefined;

  before(async () => {
    ctx = await startTestApp();
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    base = ctx.tessera.publicUrl();
    browser = await launchChromium();
  });
  after(async () => {
    await shared?.context.close();
    await browser?.close();
    await ctx?.close();
  });

  /** A fresh browser context whose requests to anywhere but the service fail, as offline. */
  async function offlinePage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const origin = new URL(base).origin;
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (new URL(url).origin === origin) return route.continue();
      outside.push(url);
      return route.abort('internetdisconnected');
    });
    return { context, page: await context.newPage() };
  }

  test('renders every operation from the service alone, with nothing asked of another origin', async () => {
    shared = await offlinePage();
    const { page } = shared;
    const weights: Array<{ url: string; bytes: number }> = [];
    page.on('response', async (response) => {
      const body = await response.body().catch(() => Buffer.alloc(0));
      weights.push({ url: response.url(), bytes: body.length });
    });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    // A request the page's policy blocks is a console error (Redoc's logo from cdn.redoc.ly was two).
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.goto(`${base}/docs`, { waitUntil: 'networkidle', timeout: 120_000 });
    // The operation's heading, rendered by Redoc from the document.
    const operation = page.locator(`[id$="${createPaymentSuffix}"]`).first();
    await operation.waitFor({ timeout: 60_000 });
    operationId = (await operation.getAttribute('id')) ?? '';
    assert.match(await operation.locator('h2').first().innerText(), /payment/i);
    const operations = await page.locator('[id^="tag/"][id*="/paths/"]').count();
    assert.ok(operations >= 50, `${operations} operations rendered`);
    // The guides and the error catalog are sections of the same page.
    assert.ok(await page.locator('[id^="section/"]').count(), 'the guides render as sections');
    assert.deepEqual(errors, [], 'no script or console error');
    assert.deepEqual(outside, [], 'no request left the service');
    // The tab's icon, from the service.
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    const served = await page.request.get(new URL(icon!, base).href);
    assert.equal(served.status(), 200);
    assert.equal(served.headers()['content-type'], 'image/svg+xml');

    const total = weights.reduce((sum, { bytes }) => sum + bytes, 0);
    assert.ok(total < 3_000_000, `the page weighs ${total} bytes`);
    // The figures quoted in docs/decisions/0018-api-reference-redoc.md.
    for (const { url, bytes } of weights) console.log(`# /docs weight: ${new URL(url).pathname} ${bytes} bytes`);
    console.log(`# /docs weight: ${weights.length} requests, ${total} bytes in all`);
  });

  test('has no serious axe-core violation and does not scroll sideways at 1280 and 390 px (docs/dashboard.md#layout-phones-and-accessibility)', async () => {
    assert.ok(shared, 'the first test loaded the page');
    const { page } = shared;
    const { accessibility, sideways } = await auditAtDeskAndPhone(
      page,
      { accessibility: [], sideways: [] },
      undefined,
      {
        timeoutMs: 120_000,
      },
    );
    assert.deepEqual(accessibility, []);
    assert.deepEqual(sideways, []);
  });

  test('search finds an operation, and choosing it shows that operation', async () => {
    assert.ok(shared, 'the first test loaded the page');
    const { page } = shared;
    await page.evaluate(() => window.scrollTo(0, 0));
    const search = page.getByRole('textbox', { name: /search/i });
    await search.waitFor({ timeout: 60_000 });
    await search.fill('refund');
    const results = page.locator('[data-role="search:results"] li');
    await results.first().waitFor({ timeout: 20_000 });
    const found = await results.allTextContents();
    assert.ok(
      found.some((text) => /refund/i.test(text)),
      found.join(' | '),
    );
    await results.first().click();
    await page.waitForFunction(() => window.scrollY > 0, undefined, { timeout: 20_000 });
    assert.deepEqual(outside, [], 'no request left the service');
  });

  test('a deep link scrolls to its operation', async () => {
    assert.ok(operationId, 'the first test read the operation id');
    // A page of its own: a deep link is a first load at that address, not a hash change.
    const { context, page } = await offlinePage();
    try {
      await page.goto(`${base}/docs#${operationId}`, { waitUntil: 'networkidle', timeout: 120_000 });
      const target = page.locator(`[id="${operationId}"]`).first();
      await target.waitFor({ timeout: 60_000 });
      // Redoc scrolls once the document is rendered: the operation ends up at the top of the window.
      await page.waitForFunction(
        (id) => {
          const element = document.getElementById(id);
          if (!element || window.scrollY === 0) return false;
          const top = element.getBoundingClientRect().top;
          return top >= -5 && top < 200;
        },
        operationId,
        { timeout: 30_000 },
      );
      assert.ok(await page.evaluate(() => window.scrollY > 1000), 'scrolled well down the page');
      assert.deepEqual(outside, [], 'no request left the service');
    } finally {
      await context.close();
    }
  });
});
