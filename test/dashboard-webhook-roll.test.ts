import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { acceptLink, dashboardClient, linkInMail, signedInOwner, type DashboardClient } from './helpers/dashboard.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

/*
 * Rolling an endpoint's token with a grace period from its dashboard page (docs/webhooks.md#standard-webhooks-format): the grace
 * (none … 24 h) and the algorithm are chosen in a form, only for the standard format; Owners,
 * Administrators and Developers only; CSRF-checked like every form; audited with the member.
 */
describe(`dashboard: roll a token with a grace period (${databaseKind})`, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let owner: DashboardClient;
  let receiver: Receiver;
  const base = '/dashboard/developers';

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    merchant = await ctx.merchant({ name: 'Roll shop' });
    owner = await signedInOwner(ctx, merchant.id, 'owner@roll.test', 'correct horse battery');
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver?.close();
    await ctx?.close();
  });

  async function pay(): Promise<void> {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    await merchant.call('POST', '/payment/create', {
      amount: '700',
      currency: 'EUR',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    await ctx.tessera.webhookDispatcher.runOnce();
  }

  function verifies(token: string): boolean {
    const request = receiver.requests.at(-1)!;
    const realNow = Date.now;
    Date.now = () => ctx.clock.now().getTime();
    try {
      new Webhook(token).verify(request.body, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    } finally {
      Date.now = realNow;
    }
  }

  it('rolls a standard endpoint with a grace period: both tokens sign until it ends; audited with the member', async () => {
    const created = await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver.url(),
      format: 'standard',
    });
    const { id, token: oldToken } = created.body.data as { id: string; token: string };
    const page = await owner.get(`${base}/webhooks/${id}`);
    assert.equal(page.status, 200);
    assert.match(page.body, /<select id="f-expiresInSeconds" name="expiresInSeconds"/);
    assert.match(page.body, /<option value="86400"\s*>24 hours<\/option>/);

    const rolled = await owner.post(`${base}/webhooks/${id}/roll`, {
      expiresInSeconds: '3600',
      signatureAlgorithm: 'hmac-sha256',
    });
    assert.equal(rolled.status, 200, rolled.body);
    const newToken = /<p class="secret" id="token">(whsec_[A-Za-z0-9]{48})<\/p>/.exec(rolled.body)?.[1];
    assert.ok(newToken, 'the new token is shown once');
    assert.match(rolled.body, /the old one keeps signing beside it until/);
    const revealed = await merchant.call('GET', `/webhook_endpoints/${id}/reveal_token`);
    assert.equal(revealed.body.data.token, newToken);

    await pay();
    assert.equal(verifies(oldToken), true, 'the old token still signs during the grace period');
    assert.equal(verifies(newToken), true);
    ctx.clock.advance(3600_000);
    await pay();
    assert.equal(verifies(oldToken), false, 'and stops after it');
    assert.equal(verifies(newToken), true);

    const audit = await ctx.tessera.db.query<{ actor: string }>(
      "SELECT actor FROM audit_log WHERE merchant_id = $1 AND action = 'webhook_endpoint.token_rolled' AND object_id = $2",
      [merchant.id, id],
    );
    assert.equal(audit.length, 1);
    assert.match(audit[0]!.actor, /^member:/);
  });

  it('rolls to ed25519 from the form: the page shows the public key, never the secret key', async () => {
    const created = await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver.url(),
      format: 'standard',
    });
    const id = created.body.data.id as string;
    const rolled = await owner.post(`${base}/webhooks/${id}/roll`, {
      expiresInSeconds: '0',
      signatureAlgorithm: 'ed25519',
    });
    assert.equal(rolled.status, 200, rolled.body);
    const publicKey = /<p class="secret" id="token">(whpk_[A-Za-z0-9+/]{43}=)<\/p>/.exec(rolled.body)?.[1];
    assert.ok(publicKey, rolled.body.slice(-2000));
    assert.match(rolled.body, /The new public key/);
    assert.doesNotMatch(rolled.body, /whsk_/);
    const page = await owner.get(`${base}/webhooks/${id}`);
    assert.ok(page.body.includes(`<p class="secret" id="public-key">${publicKey}</p>`));
  });

  it('a moneycollect endpoint offers no grace; a forged grace or one beyond 24 h is refused naming the field', async () => {
    const created = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver.url() });
    const { id, token } = created.body.data as { id: string; token: string };
    const page = await owner.get(`${base}/webhooks/${id}`);
    assert.doesNotMatch(page.body, /name="expiresInSeconds"/);
    assert.match(page.body, /A grace period needs the Standard Webhooks/);
    const forged = await owner.post(`${base}/webhooks/${id}/roll`, { expiresInSeconds: '3600' });
    assert.equal(forged.status, 400);
    assert.match(forged.body, /expiresInSeconds needs an endpoint in the standard format/);
    const revealed = await merchant.call('GET', `/webhook_endpoints/${id}/reveal_token`);
    assert.equal(revealed.body.data.token, token, 'a refused roll changes nothing');

    const standard = await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver.url(),
      format: 'standard',
    });
    const tooLong = await owner.post(`${base}/webhooks/${standard.body.data.id}/roll`, { expiresInSeconds: '90000' });
    assert.equal(tooLong.status, 400);
    assert.match(tooLong.body, /aria-invalid="true" aria-describedby="f-expiresInSeconds-error"/);
  });

  it('only Owners, Administrators and Developers may roll, and only with the CSRF token of the session', async () => {
    const created = await merchant.call('POST', '/webhook_endpoints/create', {
      url: receiver.url(),
      format: 'standard',
    });
    const { id, token } = created.body.data as { id: string; token: string };
    const support = dashboardClient(ctx);
    const invited = await owner.post('/dashboard/team/invite', {
      email: 'support@roll.test',
      name: 'S',
      role: 'support',
    });
    assert.equal(invited.status, 200, invited.body);
    assert.equal(
      (await acceptLink(support, linkInMail(ctx, 'support@roll.test'), 'correct horse battery')).status,
      303,
    );
    const refused = await support.post(`${base}/webhooks/${id}/roll`, { expiresInSeconds: '3600' });
    assert.equal(refused.status, 403);

    const cookie = [...owner.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const forged = await ctx.tessera.server.inject({
      method: 'POST',
      url: `${base}/webhooks/${id}/roll`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: '_csrf=forged&expiresInSeconds=3600',
    });
    assert.equal(forged.statusCode, 403);
    const revealed = await merchant.call('GET', `/webhook_endpoints/${id}/reveal_token`);
    assert.equal(revealed.body.data.token, token, 'neither request rolled the token');
  });
});
