import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { signedInOwner, type DashboardClient } from './helpers/dashboard.js';

describe('dashboard: API request logs (issue 11, docs/dashboard.md#roles)', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  const page = '/dashboard/developers/request-logs';

  before(async () => {
    ctx = await startTestApp();
    merchant = await ctx.merchant({ name: 'Logs shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@logs.test', 'correct horse battery');
  });
  after(() => ctx?.close());

  it("lists the merchant's API requests after a flush: method, route, status, latency, X-TraceId and key", async () => {
    const created = await merchant.call('POST', '/customers/create', { email: 'logged@logs.test' });
    assert.equal(created.status, 200);
    const traceId = String(created.headers['x-traceid']);
    await ctx.tessera.requestLogs.flush();
    const answer = await owner.get(page);
    assert.equal(answer.status, 200);
    const row = answer.body.slice(answer.body.indexOf('/api/services/v1/customers/create') - 200);
    assert.match(
      row,
      /<td[^>]*>POST<\/td>\s*<td[^>]*><code>\/api\/services\/v1\/customers\/create<\/code><\/td>\s*<td[^>]*>200<\/td>/,
    );
    assert.match(answer.body, new RegExp(`<code>${traceId}</code>`));
    assert.match(answer.body, /<td data-label="Key" class="hide-narrow">private<\/td>/);
    // Another merchant's requests are not shown.
    const other = await ctx.merchant({ name: 'Other shop' });
    await other.call('GET', '/refunds');
    await ctx.tessera.requestLogs.flush();
    assert.doesNotMatch((await owner.get(page)).body, /\/api\/services\/v1\/refunds</);
  });

  it('stores the route pattern, never the URL: a card number typed into a path or a query is nowhere', async () => {
    const card = '4242424242424242';
    const lookedUp = await merchant.call('GET', `/payment_methods/${card}`);
    assert.equal(lookedUp.status, 404);
    await merchant.call('GET', `/customers?email=${card}%40x.test`);
    await ctx.tessera.requestLogs.flush();
    const answer = await owner.get(page);
    assert.match(answer.body, /\/api\/services\/v1\/payment_methods\/:id/);
    assert.doesNotMatch(answer.body, new RegExp(card));
    const stored = await ctx.tessera.db.query<{ route: string }>(
      'SELECT route FROM api_request_logs WHERE merchant_id = $1',
      [merchant.id],
    );
    assert.ok(stored.length >= 3);
    assert.ok(stored.every((row) => !row.route.includes(card) && !row.route.includes('?')));
  });

  it('filters by status class and by path, keeping the filters in the form', async () => {
    await merchant.call('GET', '/payment/pt_0000000000000000001');
    await ctx.tessera.requestLogs.flush();
    const failed = await owner.get(`${page}?status=4xx`);
    assert.match(failed.body, /\/api\/services\/v1\/payment\/:id/);
    assert.doesNotMatch(failed.body, /customers\/create/);
    assert.match(failed.body, /<option value="4xx" selected>/);
    const byPath = await owner.get(`${page}?path=customers`);
    assert.match(byPath.body, /customers\/create/);
    assert.doesNotMatch(byPath.body, /payment\/:id/);
    assert.match(byPath.body, /id="f-path"[^>]*value="customers"/);
    const refused = await owner.get(`${page}?status=6xx&path=typed`);
    assert.equal(refused.status, 400);
    assert.match(refused.body, /id="f-status-error"/);
    assert.match(refused.body, /value="typed"/);
  });

  it('pages newest first by cursor', async () => {
    for (let index = 0; index < 55; index += 1) {
      ctx.clock.advance(1000);
      await merchant.call('GET', `/customers?limit=${index + 1}`);
    }
    await ctx.tessera.requestLogs.flush();
    const first = await owner.get(`${page}?path=/customers`);
    const times = [...first.body.matchAll(/<td[^>]*>(\d{4}-\d{2}-\d{2} [\d:]+ UTC)<\/td>/g)].map((match) => match[1]!);
    assert.equal(times.length, 50);
    assert.deepEqual([...times].sort().reverse(), times);
    const older = /href="([^"]*startingAfter=req_\d{19}[^"]*)"/.exec(first.body)?.[1]?.replace(/&amp;/g, '&');
    assert.ok(older, 'an Older link');
    const second = await owner.get(older);
    assert.equal(second.status, 200);
    const rest = [...second.body.matchAll(/<td[^>]*>(\d{4}-\d{2}-\d{2} [\d:]+ UTC)<\/td>/g)].map((match) => match[1]!);
    assert.ok(rest.length >= 5);
    assert.ok(rest[0]! <= times[times.length - 1]!);
    assert.match(second.body, /endingBefore=req_/);
    assert.equal((await owner.get(`${page}?startingAfter=nonsense`)).status, 400);
  });

  it('purges rows older than 30 days with the periodic jobs', async () => {
    const count = async () =>
      Number(
        (
          await ctx.tessera.db.query<{ count: string | number }>(
            'SELECT count(*) AS count FROM api_request_logs WHERE merchant_id = $1',
            [merchant.id],
          )
        )[0]!.count,
      );
    assert.ok((await count()) > 0);
    ctx.clock.advance(31 * 24 * 60 * 60 * 1000);
    await merchant.call('GET', '/customers');
    await ctx.tessera.requestLogs.flush();
    await ctx.runJobs();
    assert.equal(await count(), 1);
  });
});
