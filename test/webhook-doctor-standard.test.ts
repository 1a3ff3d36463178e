import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './helpers/receiver.js';

/*
 * The doctor for Standard Webhooks headers (docs/webhooks.md#standard-webhooks-format): given a standard-format notification as a
 * receiver got it, it says why verification fails — the whsec_ prefix, webhook-timestamp's 5-minute
 * tolerance and Unix seconds, the space-separated signature list — as it does for the headers (docs/webhooks.md#what-is-sent).
 */

function rawHeaderText(request: ReceivedRequest): string {
  const lines = [`${request.method} ${request.path} HTTP/1.1`];
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    lines.push(`${request.rawHeaders[index]}: ${request.rawHeaders[index + 1]}`);
  }
  return lines.join('\r\n');
}

type Finding = { code: string; severity: string; message: string };
type Report = { verifies: boolean; findings: Finding[] };

const codes = (report: Report) => report.findings.filter((item) => item.severity !== 'info').map((item) => item.code);
const finding = (report: Report, code: string) => report.findings.find((item) => item.code === code);

describe(`webhook doctor, Standard Webhooks headers (${databaseKind})`, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let receiver: Receiver;
  let endpoint: { id: string; token: string };
  let sent: ReceivedRequest;
  const secrets: string[] = [];

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    merchant = await ctx.merchant();
    receiver = await startReceiver();
    endpoint = (
      await merchant.call('POST', '/webhook_endpoints/create', { url: receiver.url('/a'), format: 'standard' })
    ).body.data;
    secrets.push(endpoint.token);
    await pay();
    sent = receiver.requests.at(-1)!;
    assert.match(String(sent.headers['webhook-signature']), /^v1,/);
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  async function pay(): Promise<void> {
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const payment = await merchant.call('POST', '/payment/create', {
      amount: '1999',
      currency: 'USD',
      paymentMethod: method.body.data.id,
      confirm: true,
    });
    assert.equal(payment.body.data.status, 'succeeded', payment.raw);
    await ctx.tessera.webhookDispatcher.runOnce();
  }

  const diagnose = async (input: Record<string, unknown>): Promise<Report> => {
    const answer = await merchant.call('POST', '/webhooks/doctor', input);
    assert.equal(answer.status, 200, answer.raw);
    for (const secret of secrets) assert.ok(!answer.raw.includes(secret), 'a key was echoed');
    assert.doesNotMatch(answer.raw, /whsk_/);
    return answer.body.data;
  };

  test('a standard delivery verifies; the doctor shows how a mishandled whsec_ prefix would sign', async () => {
    const report = await diagnose({ headers: rawHeaderText(sent), body: sent.body, token: endpoint.token });
    assert.equal(report.verifies, true, JSON.stringify(report));
    assert.deepEqual(codes(report), ['verifies']);
    assert.match(report.findings[0]!.message, /webhook-timestamp is within 5 minutes/);
    assert.equal(
      finding(report, 'rolled_tokens_not_kept'),
      undefined,
      'that note is for the moneycollect format (Request-Time and Signature headers)',
    );
    // What a receiver keying the HMAC with the token's text (prefix included) would compute.
    const signed = `${sent.headers['webhook-id']}.${sent.headers['webhook-timestamp']}.${sent.body}`;
    const wrong = createHmac('sha256', endpoint.token).update(signed).digest('base64').slice(0, 12);
    const prefix = finding(report, 'secret_prefix')!;
    assert.match(prefix.message, /base64-decode/);
    assert.ok(prefix.message.includes(`${wrong}…`), prefix.message);
    // Without a token, the endpoint's own is found.
    const byEndpoint = await diagnose({ headers: sent.headers, body: sent.body });
    assert.equal(byEndpoint.verifies, true, JSON.stringify(byEndpoint));
  });

  test('webhook-timestamp: more than 5 minutes off is clock skew; milliseconds are named', async () => {
    const now = ctx.clock.now();
    ctx.clock.advance(6 * 60 * 1000);
    try {
      const report = await diagnose({ headers: rawHeaderText(sent), body: sent.body, token: endpoint.token });
      assert.equal(report.verifies, false);
      assert.deepEqual(codes(report), ['clock_skew']);
      assert.match(report.findings[0]!.message, /360 s behind Tessera's clock.*5 minutes.*Unix seconds/);
    } finally {
      ctx.clock.set(now);
    }
    const milliseconds = { ...sent.headers, 'webhook-timestamp': `${sent.headers['webhook-timestamp']}000` };
    const report = await diagnose({ headers: milliseconds, body: sent.body, token: endpoint.token });
    assert.equal(report.verifies, false);
    assert.deepEqual(codes(report), ['malformed_webhook_timestamp']);
    assert.match(report.findings[0]!.message, /milliseconds/);
    const { ['webhook-id']: _id, ...withoutId } = sent.headers;
    const missing = await diagnose({ headers: withoutId, body: sent.body, token: endpoint.token });
    assert.deepEqual(codes(missing), ['header_missing']);
    assert.match(missing.findings[0]!.message, /webhook-id header is missing/);
  });

  test('the signature list: a grace period sends two, the old token matches the second; a wrong form is named', async () => {
    const rolled = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/roll_token`, {
      expiresInSeconds: 3600,
    });
    assert.equal(rolled.status, 200, rolled.raw);
    secrets.push(rolled.body.data.token);
    await pay();
    const both = receiver.requests.at(-1)!;
    assert.equal(String(both.headers['webhook-signature']).split(' ').length, 2);
    const old = await diagnose({ headers: rawHeaderText(both), body: both.body, token: endpoint.token });
    assert.equal(old.verifies, true);
    assert.deepEqual(codes(old), ['verifies', 'signature_list']);
    assert.match(finding(old, 'signature_list')!.message, /2 signatures separated by spaces.*entry 2 matches/);
    const fresh = await diagnose({ headers: rawHeaderText(both), body: both.body, token: rolled.body.data.token });
    assert.deepEqual(codes(fresh), ['verifies']);
    assert.equal(finding(fresh, 'signature_list')?.severity, 'info');

    const stripeLike = { ...both.headers, 'webhook-signature': 'v1=abc' };
    const malformed = await diagnose({ headers: stripeLike, body: both.body, token: endpoint.token });
    assert.deepEqual(codes(malformed), ['malformed_signature']);
    assert.match(malformed.findings[0]!.message, /space-separated list/);
    const changed = await diagnose({
      headers: rawHeaderText(both),
      body: both.body.replace('1999', '1998'),
      token: endpoint.token,
    });
    assert.ok(codes(changed).includes('body_changed'), JSON.stringify(changed));
  });

  test('ed25519: the public key verifies the v1a signature; a whsec_ token for it is the wrong algorithm', async () => {
    const hook = await startReceiver();
    try {
      const ed25519 = (
        await merchant.call('POST', '/webhook_endpoints/create', {
          url: hook.url(),
          format: 'standard',
          signatureAlgorithm: 'ed25519',
        })
      ).body.data;
      await pay();
      const request = hook.requests.at(-1)!;
      assert.match(String(request.headers['webhook-signature']), /^v1a,/);
      const good = await diagnose({ headers: rawHeaderText(request), body: request.body, token: ed25519.publicKey });
      assert.equal(good.verifies, true, JSON.stringify(good));
      const byEndpoint = await diagnose({ headers: request.headers, body: request.body, endpointId: ed25519.id });
      assert.equal(byEndpoint.verifies, true, JSON.stringify(byEndpoint));
      const wrong = await diagnose({ headers: rawHeaderText(request), body: request.body, token: endpoint.token });
      assert.equal(wrong.verifies, false);
      assert.equal(codes(wrong)[0], 'wrong_algorithm');
      assert.match(finding(wrong, 'wrong_algorithm')!.message, /publicKey \(whpk_…\)/);
      const publicForHmac = await diagnose({ headers: rawHeaderText(sent), body: sent.body, token: ed25519.publicKey });
      assert.equal(codes(publicForHmac)[0], 'wrong_algorithm');
    } finally {
      await hook.close();
    }
  });
});
