/**
 * What staff read (issue 22, docs/dashboard.md#pages) at the HTTP level: people and money in lists, status
 * badges and tabs with counts, quick date ranges, the home's period against the previous one,
 * empty states that say what to do next, and only the actions a member's role allows.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { acceptLink, linkInMail, dashboardClient, signedInOwner, type DashboardClient } from './helpers/dashboard.js';

const password = 'correct horse battery';
const dayMs = 24 * 60 * 60 * 1000;

describe('dashboard: what staff read (issue 22)', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  const members = new Map<string, DashboardClient>();
  let paidId = '';

  const card = async (cardNo: string, billingDetails?: Record<string, unknown>) => {
    const created = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
      ...(billingDetails ? { billingDetails } : {}),
    });
    assert.equal(created.status, 200, created.raw);
    return created.body.data.id as string;
  };
  const pay = async (amount: string, paymentMethod: string, extra: Record<string, unknown> = {}) => {
    const paid = await merchant.call('POST', '/payment/create', {
      amount,
      currency: 'USD',
      confirm: true,
      paymentMethod,
      ...extra,
    });
    assert.equal(paid.status, 200, paid.raw);
    return paid.body.data.id as string;
  };

  before(async () => {
    ctx = await startTestApp();
    merchant = await ctx.merchant({ name: 'Look shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@look.test', password);
    for (const role of ['developer', 'analyst', 'support']) {
      const invited = await owner.post('/dashboard/team/invite', { email: `${role}@look.test`, name: role, role });
      assert.equal(invited.status, 200, invited.body);
      const client = dashboardClient(ctx);
      assert.equal((await acceptLink(client, linkInMail(ctx, `${role}@look.test`), password)).status, 303);
      members.set(role, client);
    }
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', {
      url: 'http://127.0.0.1:9/secret-hook',
    });
    assert.equal(endpoint.status, 200, endpoint.raw);
    // Two payments eight days ago (the previous 7-day period), three today.
    const now = ctx.clock.now();
    ctx.clock.set(new Date(now.getTime() - 8 * dayMs));
    await pay('1000', await card('4242424242424242'));
    await pay('1000', await card('4242424242424242'));
    ctx.clock.set(now);
    const customer = await merchant.call('POST', '/customers/create', {
      email: 'ada@look.test',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    paidId = await pay('123456', await card('4242424242424242'), { customerId: customer.body.data.id });
    await pay(
      '2500',
      await card('4000000000000002', { firstName: 'Grace', lastName: 'Hopper', email: 'grace@look.test' }),
    );
    await pay('700', await card('5555555555554444'));
    await ctx.tessera.webhookDispatcher.runOnce();
  });
  after(() => ctx?.close());

  it('lists payments with the customer or card holder, money in major units with currency, and status badges', async () => {
    const list = await owner.get('/dashboard/payments');
    assert.equal(list.status, 200);
    const row = list.body.slice(list.body.indexOf(`/dashboard/payments/${paidId}"`) - 400);
    assert.match(row, /1234\.56 <span class="currency">USD<\/span>/);
    assert.match(row, /<span class="badge badge-good">Succeeded<\/span>/);
    assert.match(list.body, /Ada Lovelace <span class="muted">ada@look\.test<\/span>/);
    assert.match(list.body, /Grace Hopper <span class="muted">grace@look\.test<\/span>/);
    assert.match(list.body, /<span class="badge badge-bad">Failed<\/span>/);
    assert.doesNotMatch(list.body, />requires_action</);
  });

  it('shows status tabs with counts, keeping the other filters, the chosen tab marked', async () => {
    const list = await owner.get('/dashboard/payments?status=failed&q=grace%40look.test');
    assert.equal(list.status, 200);
    assert.match(list.body, /href="\/dashboard\/payments\?q=grace%40look\.test"\s*>All <span class="count">5<\/span>/);
    assert.match(list.body, /aria-current="page"\s*>Failed <span class="count">1<\/span>/);
    assert.match(list.body, /status=succeeded"\s*>Succeeded <span class="count">4<\/span>/);
  });

  it('caps each tab count at 99+ so that counting stays cheap however many payments there are', async () => {
    const other = await ctx.merchant({ name: 'Busy shop' });
    const busy = await signedInOwner(ctx, other.id, 'owner@busy.test', password);
    for (let index = 0; index < 100; index += 1) {
      const created = await other.call('POST', '/payment/create', { amount: '100', currency: 'USD' });
      assert.equal(created.status, 200, created.raw);
    }
    const list = await busy.get('/dashboard/payments');
    assert.match(list.body, />All <span class="count">99\+<\/span>/);
    assert.match(list.body, />Incomplete <span class="count">99\+<\/span>/);
    assert.match(list.body, />Succeeded <span class="count">0<\/span>/);
  });

  it('offers quick date ranges as UTC days of the service clock, and filters by them', async () => {
    const today = ctx.clock.now().toISOString().slice(0, 10);
    const weekAgo = new Date(ctx.clock.now().getTime() - 6 * dayMs).toISOString().slice(0, 10);
    const list = await owner.get('/dashboard/payments');
    assert.match(list.body, new RegExp(`href="/dashboard/payments\\?from=${today}&amp;to=${today}"[^>]*>Today<`));
    assert.match(
      list.body,
      new RegExp(`href="/dashboard/payments\\?from=${weekAgo}&amp;to=${today}"[^>]*>Last 7 days<`),
    );
    const week = await owner.get(`/dashboard/payments?from=${weekAgo}&to=${today}`);
    assert.match(week.body, />All <span class="count">3<\/span>/);
    assert.match(week.body, /aria-current="true">Last 7 days</);
  });

  it("compares the home's period with the previous one", async () => {
    const home = await owner.get('/dashboard');
    assert.equal(home.status, 200);
    // 3 payments in the last 7 days against 2 in the 7 before; 2 of 3 succeeded against 2 of 2.
    assert.match(home.body, /id="period-count">3<\/span>\s*<span class="delta up">\+50\.0 % vs the previous 7 days/);
    assert.match(home.body, /id="period-rate">66\.7 %<\/span>\s*<span class="delta down"\s*>−33\.3 points/);
    assert.match(home.body, /1241\.56 USD<\/span>\s*<span class="delta up">\+6107\.8 % vs the previous 7 days/);
    const month = await owner.get('/dashboard?period=30');
    assert.match(month.body, /id="period-count">5<\/span>\s*<span class="delta neutral">New vs the previous 30 days/);
  });

  it('lists deliveries being retried on home, not only those given up', async () => {
    const home = await owner.get('/dashboard');
    assert.match(home.body, /<h2>Deliveries failed or being retried<\/h2>/);
    assert.match(home.body, /<span class="badge badge-warn">Retrying<\/span>/);
  });

  it('offers the Refund form only to roles that may refund', async () => {
    const shown = async (client: DashboardClient) => {
      const answer = await client.get(`/dashboard/payments/${paidId}`);
      assert.equal(answer.status, 200);
      return /action="\/dashboard\/payments\/[^"]+\/refund"/.test(answer.body);
    };
    assert.equal(await shown(owner), true);
    assert.equal(await shown(members.get('support')!), true);
    assert.equal(await shown(members.get('developer')!), false);
    assert.equal(await shown(members.get('analyst')!), false);
  });

  it("shows a payment's timeline, with webhook endpoint URLs only to roles that see webhooks", async () => {
    const page = async (client: DashboardClient) => (await client.get(`/dashboard/payments/${paidId}`)).body;
    const developer = await page(members.get('developer')!);
    assert.match(developer, /<ol class="timeline">/);
    assert.match(developer, /Payment created/);
    assert.match(developer, /secret-hook/);
    for (const role of ['analyst', 'support']) {
      const body = await page(members.get(role)!);
      assert.match(body, /<ol class="timeline">[\s\S]*payment\.succeeded/);
      assert.doesNotMatch(body, /secret-hook|127\.0\.0\.1:9/, role);
      assert.doesNotMatch(body, /\/dashboard\/developers\//, role);
    }
  });

  it('refunds in major units of the payment currency', async () => {
    const refused = await owner.post(`/dashboard/payments/${paidId}/refund`, { amount: '1.234', reason: 'duplicate' });
    assert.equal(refused.status, 400);
    assert.match(refused.body, /id="f-amount-error"[^>]*>amount must be an amount in USD with at most 2 decimals/);
    const refunded = await owner.post(`/dashboard/payments/${paidId}/refund`, { amount: '4.56', reason: 'duplicate' });
    assert.equal(refunded.status, 200, refunded.body);
    const refunds = await merchant.call('GET', `/refunds?paymentId=${paidId}`);
    assert.deepEqual(
      refunds.body.data.data.map((refund: { amount: string }) => refund.amount),
      ['456'],
    );
  });

  it('says what to do next when there is nothing to show yet', async () => {
    const empty = await ctx.merchant({ name: 'New shop' });
    const fresh = await signedInOwner(ctx, empty.id, 'owner@new.test', password);
    for (const path of ['/dashboard', '/dashboard/payments', '/dashboard/developers/events']) {
      const answer = await fresh.get(path);
      assert.equal(answer.status, 200);
      assert.match(
        answer.body,
        /<pre class="command"><code>npx tessera trigger payment\.succeeded<\/code><\/pre>/,
        path,
      );
    }
    const filtered = await fresh.get('/dashboard/payments?q=ORD-404');
    assert.match(filtered.body, /No payments match these filters/);

    // Before the new merchant's first API request and first recorded action.
    const requests = await fresh.get('/dashboard/developers/request-logs');
    assert.match(requests.body, /No API requests yet/);
    assert.match(requests.body, /<code>npx tessera trigger payment\.succeeded<\/code>/);
    const audit = await fresh.get('/dashboard/audit-log');
    assert.match(audit.body, /Nothing recorded yet/);
    assert.match(audit.body, /<a href="\/dashboard\/team">Invite your team<\/a>/);

    // Only the built-in dynamic endpoint: the page offers to add one of the merchant's own.
    let endpoints = await fresh.get('/dashboard/developers/webhooks');
    assert.match(endpoints.body, /No endpoint of your own yet/);
    assert.match(endpoints.body, /<a href="#f-url">Add an endpoint<\/a>/);
    assert.match(endpoints.body, /id="f-url"/);
    assert.match(endpoints.body, /<code>npx tessera listen --forward-to http:\/\/localhost:3000\/webhooks<\/code>/);

    // An event made before any endpoint of the merchant's own listened: sent nowhere.
    const method = await empty.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const paid = await empty.call('POST', '/payment/create', {
      amount: '1000',
      currency: 'USD',
      confirm: true,
      paymentMethod: method.body.data.id,
    });
    assert.equal(paid.status, 200, paid.raw);
    const events = await empty.call('GET', '/events?type=payment.succeeded');
    const eventId = events.body.data.data[0].id as string;
    const event = await fresh.get(`/dashboard/developers/events/${eventId}`);
    assert.equal(event.status, 200);
    assert.match(event.body, /Not sent to any endpoint/);
    assert.match(event.body, /<a href="\/dashboard\/developers\/webhooks">Add an endpoint<\/a>/);
    assert.match(event.body, new RegExp(`<code>npx tessera events resend ${eventId}</code>`));

    const filteredRequests = await fresh.get('/dashboard/developers/request-logs?status=5xx');
    assert.match(filteredRequests.body, /No requests match these filters/);
    assert.match(filteredRequests.body, /<a href="\/dashboard\/developers\/request-logs">Clear the filters<\/a>/);

    const endpoint = await empty.call('POST', '/webhook_endpoints/create', { url: 'http://127.0.0.1:9/new-hook' });
    assert.equal(endpoint.status, 200, endpoint.raw);
    const detail = await fresh.get(`/dashboard/developers/webhooks/${endpoint.body.data.id}`);
    assert.equal(detail.status, 200);
    assert.match(detail.body, /Nothing sent to this endpoint yet/);
    assert.match(detail.body, /Run the go-live check above/);
    assert.match(detail.body, /<code>npx tessera trigger payment\.succeeded<\/code>/);
    assert.match(detail.body, /No check run yet/);
    endpoints = await fresh.get('/dashboard/developers/webhooks');
    assert.doesNotMatch(endpoints.body, /No endpoint of your own yet/);

    // A new customer: how a card and a payment come to be listed on their page.
    const customer = await empty.call('POST', '/customers/create', { email: 'new@customer.test' });
    const page = await fresh.get(`/dashboard/customers/${customer.body.data.id}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /No card saved yet: a payment with this customer’s customerId and setupFutureUsage/);
    assert.match(page.body, /No payments yet: a payment made with this customer’s customerId/);
  });
});
