import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Stripe from 'stripe';
import { startTestApp, type TestContext } from './helpers/harness.js';
import { acceptLink, dashboardClient, linkInMail, type DashboardClient } from './helpers/dashboard.js';
import { roles, type Role } from '../src/team/permissions.js';

// Test credentials made for this file: nothing any processor knows.
const stripeLive = { secretKey: 'sk_live_DashSecretValue0001Wxyz', webhookSecret: 'whsec_DashWebhookSigning0001' };
const adyenTest = {
  apiKey: 'AQEdashAdyenApiKeyValue0001Lmno',
  merchantAccount: 'ShopExampleECOM',
  hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
};
const secretValues = [stripeLive.secretKey, stripeLive.webhookSecret, adyenTest.apiKey, adyenTest.hmacKey];

interface Account {
  id: string;
  webhookUrl: string;
  credentialsHint: string;
}

describe('dashboard: the processor accounts on Settings, for the Owner only', () => {
  let ctx: TestContext;
  let merchantId: string;
  let stripeAccount: Account;
  let adyenAccount: Account;
  const members = new Map<Role, DashboardClient>();
  const password = 'correct horse battery';

  const operator = async (url: string, body: unknown) => {
    const answer = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/admin/v1${url}`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    assert.equal(answer.statusCode, 200, answer.body);
    return answer.json().data;
  };

  before(async () => {
    ctx = await startTestApp();
    const created = await operator('/merchants/create', { name: 'Processor shop', ownerEmail: 'owner@proc.test' });
    merchantId = created.id;
    const owner = dashboardClient(ctx);
    assert.equal((await acceptLink(owner, created.ownerSetPasswordUrl, password)).status, 303);
    members.set('owner', owner);
    for (const role of roles.filter((candidate) => candidate !== 'owner')) {
      const invited = await owner.post('/dashboard/team/invite', { email: `${role}@proc.test`, name: role, role });
      assert.equal(invited.status, 200, invited.body);
      const client = dashboardClient(ctx);
      assert.equal((await acceptLink(client, linkInMail(ctx, `${role}@proc.test`), password)).status, 303);
      members.set(role, client);
    }
  });
  after(() => ctx?.close());

  it('tells the Owner that no processor is connected yet', async () => {
    const page = await members.get('owner')!.get('/dashboard/settings');
    assert.equal(page.status, 200);
    assert.match(page.body, /<h2 id="processors-heading">Payment processors<\/h2>/);
    assert.match(page.body, /No processor connected/);
  });

  it("shows the Owner each account's processor, mode, status, hint, webhook URL and last notification, no secret", async () => {
    stripeAccount = await operator(`/merchants/${merchantId}/processor_accounts/create`, {
      processor: 'stripe',
      mode: 'live',
      credentials: stripeLive,
      baseUrl: 'http://127.0.0.1:9',
    });
    adyenAccount = await operator(`/merchants/${merchantId}/processor_accounts/create`, {
      processor: 'adyen',
      mode: 'test',
      credentials: adyenTest,
      baseUrl: 'http://127.0.0.1:9/v71',
    });
    await operator(`/processor_accounts/${adyenAccount.id}/update`, { status: 'disabled' });

    // A verified Stripe notification (of a type Tessera has no use for) is the last one received.
    const rawBody = JSON.stringify({ id: 'evt_dash0001', object: 'event', type: 'customer.created', data: {} });
    const notified = await ctx.tessera.server.inject({
      method: 'POST',
      url: `/processor_webhooks/${stripeAccount.id}`,
      headers: {
        'content-type': 'application/json',
        'stripe-signature': Stripe.webhooks.generateTestHeaderString({
          payload: rawBody,
          secret: stripeLive.webhookSecret,
        }),
      },
      payload: rawBody,
    });
    assert.equal(notified.statusCode, 200, notified.body);
    const [listed] = (
      await ctx.tessera.server.inject({
        method: 'GET',
        url: `/admin/v1/merchants/${merchantId}/processor_accounts`,
        headers: { authorization: `Bearer ${ctx.operatorKey}` },
      })
    )
      .json()
      .data.data.filter((account: { id: string }) => account.id === stripeAccount.id);
    assert.ok(listed.lastNotificationAt, 'the notification was recorded');

    const page = await members.get('owner')!.get('/dashboard/settings');
    assert.equal(page.status, 200);
    const section = /<section aria-labelledby="processors-heading">[\s\S]*?<\/section>/.exec(page.body)?.[0] ?? '';
    const rowOf = (account: Account) =>
      /<tr>[\s\S]*?<\/tr>/g[Symbol.match](section)?.find((row) => row.includes(account.webhookUrl)) ?? '';
    const stripeRow = rowOf(stripeAccount);
    assert.match(stripeRow, />Stripe</);
    assert.match(stripeRow, />Live</);
    assert.match(stripeRow, />Enabled</);
    assert.match(stripeRow, /<code>…Wxyz<\/code>/);
    assert.ok(stripeRow.includes(`<code>${stripeAccount.webhookUrl}</code>`), stripeRow);
    assert.match(stripeRow, /\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    const adyenRow = rowOf(adyenAccount);
    assert.match(adyenRow, />Adyen</);
    assert.match(adyenRow, />Test</);
    assert.match(adyenRow, />Disabled</);
    assert.match(adyenRow, /<code>…Lmno<\/code>/);
    assert.match(adyenRow, />never</);
    // No credential value anywhere in the page source, nor the sealed form's column name.
    for (const secret of secretValues) assert.ok(!page.body.includes(secret), 'a credential is in the page');
    assert.doesNotMatch(page.body, /whsec_|credentials_encrypted/);
  });

  it('shows the section to no other role', async () => {
    for (const role of roles.filter((candidate) => candidate !== 'owner')) {
      const page = await members.get(role)!.get('/dashboard/settings');
      // Administrators see Settings without the section; the others may not open Settings at all.
      if (role === 'administrator') assert.equal(page.status, 200, page.body.slice(-400));
      else assert.equal(page.status, 403, role);
      assert.doesNotMatch(page.body, /Payment processors|processor_webhooks|…Wxyz/, role);
    }
  });
});
