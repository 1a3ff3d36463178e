import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type ReceivedRequest, type Receiver } from './helpers/receiver.js';

/** The headers as a receiver would dump them: one `Name: value` a line, names as on the wire. */
function rawHeaderText(request: ReceivedRequest): string {
  const lines = [`${request.method} ${request.path} HTTP/1.1`];
  for (let index = 0; index < request.rawHeaders.length; index += 2) {
    lines.push(`${request.rawHeaders[index]}: ${request.rawHeaders[index + 1]}`);
  }
  return lines.join('\r\n');
}

function codes(report: { findings: Array<{ code: string; severity: string }> }): string[] {
  return report.findings.filter((item) => item.severity !== 'info').map((item) => item.code);
}

describe(`webhook verification doctor (${databaseKind})`, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let receiver: Receiver;
  let endpoint: { id: string; token: string };
  let other: { id: string; token: string };
  let sent: ReceivedRequest;
  let legacy: ReceivedRequest;

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    merchant = await ctx.merchant();
    receiver = await startReceiver();
    // The legacy kind is opt-in (docs/decisions/0014-legacy-opt-in-and-sequence.md): this endpoint asks for it, so the doctor can be shown one.
    endpoint = (
      await merchant.call('POST', '/webhook_endpoints/create', { url: receiver.url('/a'), legacyNotifications: true })
    ).body.data;
    other = (
      await merchant.call('POST', '/webhook_endpoints/create', {
        url: receiver.url('/b'),
        enabledEvents: ['refund.pending'],
      })
    ).body.data;
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
    const toA = receiver.requests.filter((request) => request.path === '/a');
    sent = toA.find((request) => JSON.parse(request.body).type === 'endpoint_payment.payment_succeeded')!;
    legacy = toA.find((request) => JSON.parse(request.body).type === 'payment.succeeded')!;
    assert.ok(sent && legacy);
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  const diagnose = async (input: Record<string, unknown>) => {
    const answer = await merchant.call('POST', '/webhooks/doctor', input);
    assert.equal(answer.status, 200, answer.raw);
    // No secret is ever echoed.
    assert.ok(!answer.raw.includes(endpoint.token) && !answer.raw.includes(other.token), 'a token was echoed');
    assert.doesNotMatch(answer.raw, /whsec_|whlegacy_/);
    return answer.body.data;
  };

  test('a delivery as received verifies with its token (raw header text), with the hex-case warning', async () => {
    const report = await diagnose({ headers: rawHeaderText(sent), body: sent.body, token: endpoint.token });
    assert.equal(report.verifies, true);
    assert.equal(report.findings[0].code, 'verifies');
    assert.deepEqual(codes(report), ['verifies', 'hex_case']);
    assert.match(report.findings[1].message, /matches only when compared without regard to case/);
    assert.ok(report.findings.some((item: any) => item.code === 'rolled_tokens_not_kept'));
  });

  test('a missing header is named; lower-cased names are a warning for case-sensitive readers', async () => {
    const withoutSignature = rawHeaderText(sent)
      .split('\r\n')
      .filter((line) => !line.startsWith('Signature:'))
      .join('\n');
    const missing = await diagnose({ headers: withoutSignature, body: sent.body, token: endpoint.token });
    assert.equal(missing.verifies, false);
    assert.deepEqual(codes(missing), ['header_missing']);
    assert.match(missing.findings[0].message, /The Signature header is missing/);

    const lowered = await diagnose({ headers: sent.headers, body: sent.body, endpointId: endpoint.id });
    assert.equal(lowered.verifies, true);
    assert.deepEqual(codes(lowered), ['verifies', 'header_case', 'header_case', 'hex_case']);
    assert.match(lowered.findings[1].message, /named request-time, not Request-Time.*PHP SDK/);
  });

  test('a Request-Time more than 3 minutes off is clock skew', async () => {
    const now = ctx.clock.now();
    ctx.clock.advance(4 * 60 * 1000);
    try {
      const report = await diagnose({ headers: rawHeaderText(sent), body: sent.body, token: endpoint.token });
      assert.equal(report.verifies, false);
      assert.deepEqual(codes(report), ['clock_skew', 'hex_case']);
      assert.match(report.findings[0].message, /240 s behind Tessera's clock.*3 minutes/);
    } finally {
      ctx.clock.set(now);
    }
  });

  test('a re-encoded or altered body is shown where it differs from the stored event', async () => {
    const pretty = JSON.stringify(JSON.parse(sent.body), null, 2);
    const reencoded = await diagnose({ headers: rawHeaderText(sent), body: pretty, token: endpoint.token });
    assert.equal(reencoded.verifies, false);
    const changed = reencoded.findings.find((item: any) => item.code === 'body_changed');
    assert.match(changed.message, /re-encoded/);
    assert.equal(changed.position, 1);
    assert.equal(changed.received.slice(0, 3), '{\n ');

    const paymentAmount = JSON.parse(sent.body).data.amount;
    const altered = sent.body.replace(`"amount":"${paymentAmount}"`, '"amount":"7"');
    const report = await diagnose({ headers: rawHeaderText(sent), body: altered, token: endpoint.token });
    const finding = report.findings.find((item: any) => item.code === 'body_changed');
    assert.match(finding.message, /content differs/);
    assert.equal(finding.position, sent.body.indexOf(`"amount":"${paymentAmount}"`) + 10);
  });

  test("another endpoint's token is a wrong token; the legacy kind is named", async () => {
    const wrong = await diagnose({ headers: rawHeaderText(sent), body: sent.body, token: other.token });
    assert.equal(wrong.verifies, false);
    assert.ok(codes(wrong).includes('wrong_token'));
    const message = wrong.findings.find((item: any) => item.code === 'wrong_token').message;
    assert.match(message, new RegExp(`Signed with the token of endpoint ${endpoint.id}, not with the token you gave`));

    const legacyReport = await diagnose({ headers: rawHeaderText(legacy), body: legacy.body, token: endpoint.token });
    assert.equal(legacyReport.verifies, false);
    assert.ok(codes(legacyReport).includes('legacy_kind'));
  });

  test('after a roll nothing matches, and the doctor says rolled tokens are not kept', async () => {
    const extra = await startReceiver();
    try {
      const rolled = (await merchant.call('POST', '/webhook_endpoints/create', { url: extra.url() })).body.data;
      const check = await merchant.call('POST', `/webhook_endpoints/${rolled.id}/check`);
      assert.equal(check.status, 200);
      const request = extra.requests[0]!;
      await merchant.call('POST', `/webhook_endpoints/${rolled.id}/roll_token`);
      const report = await diagnose({ headers: rawHeaderText(request), body: request.body, endpointId: rolled.id });
      assert.equal(report.verifies, false);
      assert.deepEqual(codes(report), ['no_key_matches']);
      const note = report.findings.find((item: any) => item.code === 'rolled_tokens_not_kept');
      assert.match(note.message, /keeps no previous tokens/);
    } finally {
      await extra.close();
    }
  });

  test('bad input is 400 naming the field; an unknown endpoint is 404', async () => {
    const noBody = await merchant.call('POST', '/webhooks/doctor', { headers: 'Signature: x' });
    assert.equal(noBody.status, 400);
    assert.equal(noBody.body.code, 'invalid_request');
    assert.equal(noBody.body.data.param, 'body');
    const unknown = await merchant.call('POST', '/webhooks/doctor', {
      headers: {},
      body: '{}',
      endpointId: 'we_1000000000000000000',
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.data.param, 'endpointId');
  });
});
