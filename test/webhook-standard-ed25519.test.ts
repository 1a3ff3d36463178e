import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './helpers/receiver.js';

/*
 * docs/decisions/0026: Standard Webhooks `v1a,` (ed25519) signatures, an option of the standard
 * format. The `standardwebhooks` library does not verify v1a, so the signatures are checked here
 * straight from the specification's formula with node:crypto — base64 ed25519 over
 * `${webhook-id}.${webhook-timestamp}.${body}`, the public key `whpk_` + base64 of its 32 raw bytes,
 * read as a DER SubjectPublicKeyInfo (not the way Tessera or the SDK read it) — and with the SDK.
 */

const visa = '4242424242424242';
// RFC 8410: the DER prefix of an Ed25519 SubjectPublicKeyInfo, followed by the 32 key bytes.
const spkiPrefix = Buffer.from('302a300506032b6570032100', 'hex');

/** The spec's formula: some `v1a,` signature in the header verifies the signed text with the public key. */
function specVerifiesV1a(publicKey: string, request: ReceivedRequest): boolean {
  assert.match(publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/);
  const raw = Buffer.from(publicKey.slice('whpk_'.length), 'base64');
  const key = createPublicKey({ key: Buffer.concat([spkiPrefix, raw]), format: 'der', type: 'spki' });
  const signed = Buffer.from(
    `${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`,
  );
  return String(request.headers['webhook-signature'])
    .split(' ')
    .filter((item) => item.startsWith('v1a,'))
    .some((item) => verify(null, signed, key, Buffer.from(item.slice('v1a,'.length), 'base64')));
}

describe(`Standard Webhooks ed25519 signatures (${databaseKind})`, () => {
  let ctx: TestContext;
  const receivers: Receiver[] = [];

  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await ctx.close();
  });

  async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
    const started = await startReceiver(...args);
    receivers.push(started);
    return started;
  }

  function sdkVerifies(token: string, request: ReceivedRequest): boolean {
    try {
      verifyWebhook({ headers: request.headers, rawBody: request.rawBody, token, now: ctx.clock.now() });
      return true;
    } catch {
      return false;
    }
  }

  /** The library checks webhook-timestamp against Date.now(): it is asked at Tessera's (test clock) time. */
  function libraryVerifies(token: string, request: ReceivedRequest): boolean {
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

  async function createEndpoint(merchant: TestMerchant, body: Record<string, unknown>) {
    const response = await merchant.call('POST', '/webhook_endpoints/create', body);
    assert.equal(response.status, 200, response.raw);
    return response.body.data as { id: string; token: string; publicKey: string | null; signatureAlgorithm: string };
  }

  async function pay(merchant: TestMerchant): Promise<void> {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '1999',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.status, 200, payment.raw);
  }

  const run = () => ctx.tessera.webhookDispatcher.runOnce();

  test('an ed25519 endpoint signs v1a, that its public key verifies by the spec formula and with the SDK', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const endpoint = await createEndpoint(merchant, {
      url: hook.url(),
      format: 'standard',
      signatureAlgorithm: 'ed25519',
    });
    assert.equal(endpoint.signatureAlgorithm, 'ed25519');
    assert.match(endpoint.token, /^whpk_[A-Za-z0-9+/]{43}=$/, 'the public key is what is shown');
    assert.equal(endpoint.publicKey, endpoint.token);
    const read = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(read.body.data.publicKey, endpoint.publicKey, 'the public key is on every read');
    const revealed = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}/reveal_token`);
    assert.equal(revealed.body.data.token, endpoint.publicKey);
    assert.doesNotMatch(read.raw + revealed.raw, /whsk_/, 'the secret key is never shown');

    await pay(merchant);
    await run();
    assert.equal(hook.requests.length, 1);
    const request = hook.requests[0]!;
    assert.match(String(request.headers['webhook-signature']), /^v1a,[A-Za-z0-9+/]{86}==$/);
    assert.equal(specVerifiesV1a(endpoint.publicKey!, request), true);
    assert.equal(sdkVerifies(endpoint.publicKey!, request), true);
    const altered = { ...request, body: request.body.replace('1999', '1998'), rawBody: Buffer.alloc(0) };
    altered.rawBody = Buffer.from(altered.body);
    assert.equal(specVerifiesV1a(endpoint.publicKey!, altered), false, 'a changed body does not verify');
    assert.equal(sdkVerifies(endpoint.publicKey!, altered), false);
    const other = await createEndpoint(merchant, {
      url: 'http://127.0.0.1:9/hook',
      format: 'standard',
      signatureAlgorithm: 'ed25519',
    });
    assert.equal(specVerifiesV1a(other.publicKey!, request), false, "another endpoint's key does not verify");
    assert.equal(sdkVerifies(other.publicKey!, request), false);
  });

  test('a roll from HMAC to ed25519 with a grace period sends v1a and v1 until it ends, then v1a only', async () => {
    const merchant = await ctx.merchant();
    const hook = await receiver();
    const endpoint = await createEndpoint(merchant, { url: hook.url(), format: 'standard' });
    assert.equal(endpoint.signatureAlgorithm, 'hmac-sha256');
    assert.equal(endpoint.publicKey, null);
    const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`, {
      expiresInSeconds: 600,
      signatureAlgorithm: 'ed25519',
    });
    assert.equal(rolled.status, 200, rolled.raw);
    const publicKey = rolled.body.data.token as string;
    const read = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(read.body.data.signatureAlgorithm, 'ed25519');
    assert.equal(read.body.data.publicKey, publicKey);

    await pay(merchant);
    await run();
    const during = hook.requests.at(-1)!;
    assert.match(String(during.headers['webhook-signature']), /^v1a,\S+ v1,\S+$/);
    assert.equal(libraryVerifies(endpoint.token, during), true, 'the old HMAC token still verifies');
    assert.equal(specVerifiesV1a(publicKey, during), true, 'the new public key verifies at once');
    assert.equal(sdkVerifies(publicKey, during), true);
    assert.equal(sdkVerifies(endpoint.token, during), true);

    ctx.clock.advance(600_000);
    await pay(merchant);
    await run();
    const afterwards = hook.requests.at(-1)!;
    assert.match(String(afterwards.headers['webhook-signature']), /^v1a,\S+$/);
    assert.equal(libraryVerifies(endpoint.token, afterwards), false, 'the HMAC token has stopped');
    assert.equal(sdkVerifies(endpoint.token, afterwards), false);
    assert.equal(specVerifiesV1a(publicKey, afterwards), true);

    // And back: a roll to HMAC gives a whsec_ token and drops the public key.
    const back = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`, {
      signatureAlgorithm: 'hmac-sha256',
    });
    assert.match(back.body.data.token, /^whsec_/);
    const reread = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}`);
    assert.equal(reread.body.data.publicKey, null);
  });

  test('ed25519 is refused outside the standard format, naming the field; a refused roll changes nothing', async () => {
    const merchant = await ctx.merchant();
    const refusedCreate = await merchant.call('POST', '/webhook_endpoints/create', {
      url: 'http://127.0.0.1:9/hook',
      signatureAlgorithm: 'ed25519',
    });
    assert.equal(refusedCreate.status, 400, refusedCreate.raw);
    assert.equal(refusedCreate.body.data.param, 'signatureAlgorithm');
    assert.match(refusedCreate.body.msg, /standard/);
    const unknown = await merchant.call('POST', '/webhook_endpoints/create', {
      url: 'http://127.0.0.1:9/hook',
      format: 'standard',
      signatureAlgorithm: 'rsa',
    });
    assert.equal(unknown.status, 400, unknown.raw);
    assert.equal(unknown.body.data.param, 'signatureAlgorithm');

    const moneycollect = await createEndpoint(merchant, { url: 'http://127.0.0.1:9/hook' });
    const refusedRoll = await merchant.call('POST', `/webhook_endpoints/${moneycollect.id}/roll_token`, {
      signatureAlgorithm: 'ed25519',
    });
    assert.equal(refusedRoll.status, 400, refusedRoll.raw);
    assert.equal(refusedRoll.body.data.param, 'signatureAlgorithm');
    const revealed = await merchant.call('GET', `/webhook_endpoints/${moneycollect.id}/reveal_token`);
    assert.equal(revealed.body.data.token, moneycollect.token);

    const ed25519 = await createEndpoint(merchant, {
      url: 'http://127.0.0.1:9/hook',
      format: 'standard',
      signatureAlgorithm: 'ed25519',
    });
    const refusedFormat = await merchant.call('POST', `/webhook_endpoints/${ed25519.id}/update`, {
      format: 'moneycollect',
    });
    assert.equal(refusedFormat.status, 400, refusedFormat.raw);
    assert.equal(refusedFormat.body.data.param, 'format');
    const still = await merchant.call('GET', `/webhook_endpoints/${ed25519.id}`);
    assert.equal(still.body.data.format, 'standard');
  });

  test('the go-live check signs v1a for an ed25519 endpoint: a receiver verifying by the spec passes every case', async () => {
    const merchant = await ctx.merchant();
    let publicKey = '';
    const hook = await receiver((request) => {
      if (!request.headers['webhook-signature']) return { status: 400, body: 'not a standard webhook' };
      const skewSeconds = Math.abs(ctx.clock.now().getTime() / 1000 - Number(request.headers['webhook-timestamp']));
      if (skewSeconds > 300) return { status: 400, body: 'stale' };
      return specVerifiesV1a(publicKey, request) ? { status: 200, body: 'success' } : { status: 400, body: 'bad' };
    });
    const endpoint = await createEndpoint(merchant, {
      url: hook.url(),
      format: 'standard',
      signatureAlgorithm: 'ed25519',
    });
    publicKey = endpoint.publicKey!;
    const check = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`, {});
    assert.equal(check.status, 200, check.raw);
    const failed = (check.body.data.cases as Array<{ name: string; passed: boolean }>).filter((item) => !item.passed);
    assert.deepEqual(failed, []);
    const badSignature = hook.requests.find((request) => !specVerifiesV1a(publicKey, request));
    assert.match(String(badSignature?.headers['webhook-signature']), /^v1a,/, 'the bad signature is a v1a one too');
  });
});
