import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { acceptLink, dashboardClient, linkInMail, type DashboardClient } from './helpers/dashboard.js';
import { permissions, roles, type Permission, type Role } from '../src/team/permissions.js';

describe('dashboard: team members, sign-in and the role matrix (docs/dashboard.md#roles)', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let endpointId: string;
  let paymentId: string;
  let customerId: string;
  let refundId: string;
  let customerPaymentId: string;
  // Disputes (docs/disputes.md, Sandbox): one to stage evidence on, and one per role to accept.
  let disputeId: string;
  const disputesToAccept = new Map<Role, string>();
  // Invoices per role and per action, so that each role acts on one in the right state.
  const invoices = new Map<string, string>();
  const members = new Map<Role, DashboardClient>();
  const memberIds = new Map<Role, string>();
  const password = 'correct horse battery';

  before(async () => {
    ctx = await startTestApp();
    const created = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/admin/v1/merchants/create',
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Roles shop', tokenization: true, ownerEmail: 'owner@roles.test' }),
    });
    const data = created.json().data;
    merchant = {
      id: data.id,
      privateKey: data.keys.privateKey,
      publicKey: data.keys.publicKey,
      call: async () => {
        throw new Error('unused');
      },
    };
    const owner = dashboardClient(ctx);
    const accepted = await acceptLink(owner, data.ownerSetPasswordUrl, password);
    assert.equal(accepted.status, 303);
    members.set('owner', owner);
    for (const role of roles.filter((candidate) => candidate !== 'owner')) {
      const invited = await owner.post('/dashboard/team/invite', { email: `${role}@roles.test`, name: role, role });
      assert.equal(invited.status, 200, invited.body);
      const client = dashboardClient(ctx);
      assert.equal((await acceptLink(client, linkInMail(ctx, `${role}@roles.test`), password)).status, 303);
      members.set(role, client);
    }
    const team = await ctx.tessera.team.list(merchant.id);
    for (const member of team) memberIds.set(member.role, member.id);
    const auth = { authorization: `Bearer ${merchant.privateKey}`, 'content-type': 'application/json' };
    const endpoint = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/api/services/v1/webhook_endpoints/create',
      headers: auth,
      payload: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
    });
    endpointId = endpoint.json().data.id;
    const method = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/api/services/v1/payment_methods/create',
      headers: auth,
      payload: JSON.stringify({
        type: 'card',
        card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
      }),
    });
    const payment = await ctx.tessera.server.inject({
      method: 'POST',
      url: '/api/services/v1/payment/create',
      headers: auth,
      payload: JSON.stringify({ amount: '5000', currency: 'USD', confirm: true, paymentMethod: method.json().data.id }),
    });
    paymentId = payment.json().data.id;
    assert.ok(paymentId, payment.body);
    const api = async (url: string, body: unknown = {}) => {
      const answer = await ctx.tessera.server.inject({
        method: 'POST',
        url: `/api/services/v1${url}`,
        headers: auth,
        payload: JSON.stringify(body),
      });
      assert.equal(answer.statusCode, 200, answer.body);
      return answer.json().data;
    };
    customerId = (await api('/customers/create', { email: 'buyer@roles.test', firstName: 'Ada' })).id;
    await api(`/payment_methods/${method.json().data.id}/attach`, { customerId });
    refundId = (await api('/refunds/create', { paymentId, amount: '100', reason: 'duplicate' })).id;
    customerPaymentId = (
      await api('/payment/create', {
        amount: '2500',
        currency: 'USD',
        confirm: true,
        paymentMethod: method.json().data.id,
        customerId,
      })
    ).id;
    const draft = () =>
      api('/invoices/create', {
        customerId,
        currency: 'USD',
        collectionMethod: 'send_invoice',
        lineItems: [{ description: 'Tea', amount: '1200', quantity: 2 }],
      });
    const disputed = async () => {
      const card = { cardNo: '4000000000000275', expMonth: '12', expYear: '2030', securityCode: '123' };
      const paymentMethod = (await api('/payment_methods/create', { type: 'card', card })).id;
      return (await api('/payment/create', { amount: '3000', currency: 'USD', confirm: true, paymentMethod })).id;
    };
    const disputedPayments = [await disputed(), ...(await Promise.all(roles.map(() => disputed())))];
    ctx.clock.advance(3000);
    await ctx.runJobs();
    const disputeOf = async (id: string) => {
      const found = await ctx.tessera.server.inject({
        method: 'GET',
        url: `/api/services/v1/disputes?paymentId=${id}`,
        headers: auth,
      });
      return found.json().data.data[0].id as string;
    };
    disputeId = await disputeOf(disputedPayments[0]!);
    for (const [index, role] of roles.entries())
      disputesToAccept.set(role, await disputeOf(disputedPayments[index + 1]!));
    for (const role of roles) {
      invoices.set(`finalize:${role}`, (await draft()).id);
      for (const next of ['void', 'send', 'resend']) {
        const id = (await draft()).id;
        await api(`/invoices/${id}/finalize`);
        if (next === 'resend') await api(`/invoices/${id}/send`);
        invoices.set(`${next}:${role}`, id);
      }
    }
  });
  after(() => ctx?.close());

  it('stores passwords as argon2id hashes', async () => {
    const rows = await ctx.tessera.db.query<{ password_hash: string }>(
      "SELECT password_hash FROM team_members WHERE email = 'owner@roles.test'",
    );
    assert.match(rows[0]!.password_hash, /^\$argon2id\$/);
  });

  // Each gated action of the dashboard, the permission it needs, and a request that exercises it.
  const actions: Array<{
    name: string;
    permission: Permission;
    method: 'GET' | 'POST';
    path: (role: Role) => string;
    fields?: () => Record<string, string>;
  }> = [
    { name: 'payments list', permission: 'payments.read', method: 'GET', path: () => '/dashboard/payments' },
    {
      name: 'payment detail',
      permission: 'payments.read',
      method: 'GET',
      path: () => `/dashboard/payments/${paymentId}`,
    },
    {
      name: 'refund',
      permission: 'refunds.create',
      method: 'POST',
      path: () => `/dashboard/payments/${paymentId}/refund`,
      fields: () => ({ amount: '1', reason: 'duplicate' }),
    },
    {
      name: 'webhook endpoints',
      permission: 'webhooks.read',
      method: 'GET',
      path: () => '/dashboard/developers/webhooks',
    },
    {
      name: 'endpoint detail',
      permission: 'webhooks.read',
      method: 'GET',
      path: () => `/dashboard/developers/webhooks/${endpointId}`,
    },
    {
      name: 'endpoint edit',
      permission: 'webhooks.manage',
      method: 'POST',
      path: () => `/dashboard/developers/webhooks/${endpointId}`,
      fields: () => ({
        url: 'http://127.0.0.1:9/hook',
        enabledEvents: '*',
        status: 'enabled',
        legacyNotifications: 'on',
      }),
    },
    {
      name: 'token reveal',
      permission: 'webhooks.reveal_token',
      method: 'POST',
      path: () => `/dashboard/developers/webhooks/${endpointId}/reveal`,
    },
    {
      name: 'token roll',
      permission: 'webhooks.roll_token',
      method: 'POST',
      path: () => `/dashboard/developers/webhooks/${endpointId}/roll`,
    },
    {
      name: 'go-live check',
      permission: 'webhooks.manage',
      method: 'POST',
      path: () => `/dashboard/developers/webhooks/${endpointId}/check`,
    },
    { name: 'events', permission: 'events.read', method: 'GET', path: () => '/dashboard/developers/events' },
    {
      name: 'events of an object',
      permission: 'events.read',
      method: 'GET',
      path: () => `/dashboard/developers/events?objectId=${paymentId}`,
    },
    {
      name: 'request logs',
      permission: 'request_logs.read',
      method: 'GET',
      path: () => '/dashboard/developers/request-logs',
    },
    ...['payments', 'customers', 'refunds', 'invoices'].map((list) => ({
      name: `${list} export`,
      permission: 'exports.read' as const,
      method: 'GET' as const,
      path: () => `/dashboard/${list}/export.csv`,
    })),
    { name: 'API keys', permission: 'api_keys.manage', method: 'GET', path: () => '/dashboard/developers/api-keys' },
    { name: 'team', permission: 'team.manage', method: 'GET', path: () => '/dashboard/team' },
    { name: 'audit log', permission: 'audit_log.read', method: 'GET', path: () => '/dashboard/audit-log' },
    { name: 'settings', permission: 'settings.manage', method: 'GET', path: () => '/dashboard/settings' },
    { name: 'payout settings', permission: 'payouts.manage', method: 'GET', path: () => '/dashboard/balance/settings' },
    {
      name: 'website origins',
      permission: 'settings.manage',
      method: 'POST',
      path: () => '/dashboard/settings/website',
      fields: () => ({ websiteOrigins: 'https://shop.example' }),
    },
    { name: 'customers list', permission: 'customers.read', method: 'GET', path: () => '/dashboard/customers' },
    {
      name: 'customer detail',
      permission: 'customers.read',
      method: 'GET',
      path: () => `/dashboard/customers/${customerId}`,
    },
    { name: 'refunds list', permission: 'refunds.read', method: 'GET', path: () => '/dashboard/refunds' },
    { name: 'refund detail', permission: 'refunds.read', method: 'GET', path: () => `/dashboard/refunds/${refundId}` },
    { name: 'invoices list', permission: 'invoices.read', method: 'GET', path: () => '/dashboard/invoices' },
    {
      name: 'invoice detail',
      permission: 'invoices.read',
      method: 'GET',
      path: (role) => `/dashboard/invoices/${invoices.get(`resend:${role}`)}`,
    },
    {
      name: 'invoice draft',
      permission: 'invoices.manage',
      method: 'POST',
      path: () => '/dashboard/invoices',
      fields: () => ({
        customerId,
        currency: 'USD',
        collectionMethod: 'send_invoice',
        'lineItems[0].description': 'Cake',
        'lineItems[0].amount': '450',
      }),
    },
    {
      name: 'invoice finalize',
      permission: 'invoices.manage',
      method: 'POST',
      path: (role) => `/dashboard/invoices/${invoices.get(`finalize:${role}`)}/finalize`,
    },
    {
      name: 'invoice send (first time)',
      permission: 'invoices.manage',
      method: 'POST',
      path: (role) => `/dashboard/invoices/${invoices.get(`send:${role}`)}/send`,
    },
    {
      name: 'invoice resend',
      permission: 'invoices.resend',
      method: 'POST',
      path: (role) => `/dashboard/invoices/${invoices.get(`resend:${role}`)}/send`,
    },
    {
      name: 'invoice void',
      permission: 'invoices.manage',
      method: 'POST',
      path: (role) => `/dashboard/invoices/${invoices.get(`void:${role}`)}/void`,
    },
    { name: 'disputes list', permission: 'disputes.read', method: 'GET', path: () => '/dashboard/disputes' },
    {
      name: 'dispute detail',
      permission: 'disputes.read',
      method: 'GET',
      path: () => `/dashboard/disputes/${disputeId}`,
    },
    {
      name: 'dispute evidence',
      permission: 'disputes.manage',
      method: 'POST',
      path: () => `/dashboard/disputes/${disputeId}`,
      fields: () => ({ productDescription: 'Tea, shipped', action: 'save' }),
    },
    {
      name: 'dispute accept',
      permission: 'disputes.manage',
      method: 'POST',
      path: (role) => `/dashboard/disputes/${disputesToAccept.get(role)}/accept`,
    },
    {
      name: 'ownership page',
      permission: 'team.transfer_ownership',
      method: 'GET',
      path: () => '/dashboard/team/owner',
    },
    {
      name: 'require two-factor',
      permission: 'team.require_two_factor',
      method: 'POST',
      path: () => '/dashboard/team/two-factor',
      fields: () => ({ required: 'off' }),
    },
  ];

  it('allows every role exactly the actions of the role matrix and answers 403 (audited) to the rest', async () => {
    for (const action of actions) {
      for (const role of roles) {
        const client = members.get(role)!;
        const answer =
          action.method === 'GET'
            ? await client.get(action.path(role))
            : await client.post(action.path(role), action.fields?.() ?? {});
        const allowed = (permissions[action.permission] as readonly Role[]).includes(role);
        if (allowed)
          assert.ok(
            [200, 303].includes(answer.status),
            `${role} ${action.name}: ${answer.status} ${answer.body.slice(-600)}`,
          );
        else assert.equal(answer.status, 403, `${role} ${action.name}`);
      }
    }
    const denied = await ctx.tessera.db.query<{ count: string | number }>(
      "SELECT count(*) AS count FROM audit_log WHERE merchant_id = $1 AND action LIKE 'permission.denied:%' AND actor = $2",
      [merchant.id, `member:${memberIds.get('analyst')}`],
    );
    assert.ok(Number(denied[0]!.count) >= 6);
  });

  it("shows a customer's payment methods by brand and last four digits only, and its payments", async () => {
    const answer = await members.get('analyst')!.get(`/dashboard/customers/${customerId}`);
    assert.equal(answer.status, 200);
    assert.match(answer.body, /•••• 4242/);
    assert.match(answer.body, new RegExp(customerPaymentId));
    assert.doesNotMatch(answer.body, /4242424242424242|424242\d{4}/);
  });

  it('keeps what was typed and names the field when an invoice draft is refused', async () => {
    const answer = await members.get('administrator')!.post('/dashboard/invoices', {
      customerId,
      currency: 'USD',
      collectionMethod: 'send_invoice',
      'lineItems[0].description': 'Typed cake',
      'lineItems[0].amount': 'twelve',
    });
    assert.equal(answer.status, 400);
    assert.match(answer.body, /id="f-lineItems\[0\]\.amount-error"/);
    assert.match(answer.body, /value="Typed cake"/);
  });

  it('lets Support e-mail an invoice again, through the invoice service', async () => {
    const mails = () => ctx.tessera.mail.kept().filter((message) => message.to === 'buyer@roles.test').length;
    const before = mails();
    const answer = await members.get('support')!.post(`/dashboard/invoices/${invoices.get('resend:owner')}/send`);
    assert.equal(answer.status, 200);
    assert.match(answer.body, /Sent again/);
    assert.equal(mails(), before + 1);
    const events = await ctx.tessera.db.query<{ count: string | number }>(
      "SELECT count(*) AS count FROM events WHERE type = 'Invoice.sent' AND object_id = $1",
      [invoices.get('resend:owner')],
    );
    assert.ok(Number(events[0]!.count) >= 3);
  });

  it('refuses a state-changing form without the CSRF token of the session', async () => {
    const owner = members.get('owner')!;
    const cookie = [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const answer = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/dashboard/developers/webhooks/${endpointId}/reveal`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '_csrf=forged',
    });
    assert.equal(answer.statusCode, 403);
    assert.doesNotMatch(answer.body, /whsec|wh_/);
  });

  it('sends the security headers on every page', async () => {
    const answer = await members.get('owner')!.get('/dashboard/sign-in');
    const page = await ctx.tessera.server.inject({ method: 'GET', url: '/dashboard/sign-in' });
    assert.ok(answer.status === 303 || answer.status === 200);
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /form-action 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
  });

  it('locks an account after repeated wrong passwords, with a clear message', async () => {
    const stranger = dashboardClient(ctx);
    await stranger.get('/dashboard/sign-in');
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const wrong = await stranger.post('/dashboard/sign-in', {
        email: 'support@roles.test',
        password: 'wrong password',
      });
      assert.equal(wrong.status, 401);
      assert.match(wrong.body, /not right/);
      assert.match(wrong.body, /value="support@roles.test"/);
    }
    const locked = await stranger.post('/dashboard/sign-in', { email: 'support@roles.test', password });
    assert.equal(locked.status, 429);
    assert.match(locked.body, /Too many failed sign-ins for this account/);
    ctx.clock.advance(16 * 60 * 1000);
    const again = await stranger.post('/dashboard/sign-in', { email: 'support@roles.test', password });
    assert.equal(again.status, 303);
  });

  it('uses an invitation link once only', async () => {
    const owner = members.get('owner')!;
    await owner.post('/dashboard/team/invite', { email: 'once@roles.test', name: 'Once', role: 'analyst' });
    const link = linkInMail(ctx, 'once@roles.test');
    assert.equal((await acceptLink(dashboardClient(ctx), link, password)).status, 303);
    const again = dashboardClient(ctx);
    assert.equal((await again.get(link)).status, 410);
    await again.get('/dashboard/sign-in');
    const token = new URL(link).searchParams.get('token') ?? '';
    assert.equal((await again.post('/dashboard/set-password', { token, password: 'another password 1' })).status, 410);
  });

  it('keeps the typed values and names the field when an invitation is refused', async () => {
    const answer = await members
      .get('owner')!
      .post('/dashboard/team/invite', { email: 'not-an-email', name: 'Typed', role: 'developer' });
    assert.equal(answer.status, 400);
    assert.match(answer.body, /id="f-email-error"/);
    assert.match(answer.body, /value="Typed"/);
  });
});
