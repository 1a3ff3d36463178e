import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { verifyWebhook } from '../sdk/verify-webhook.js';
import { databaseKind, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';
import { startReceiver, type Receiver, type Responder } from './helpers/receiver.js';

const timeoutMs = 1000;

type Verdicts = Record<string, boolean>;

function verdicts(check: { cases: Array<{ name: string; passed: boolean }> }): Verdicts {
  return Object.fromEntries(check.cases.map((item) => [item.name, item.passed]));
}

const allPass: Verdicts = {
  valid: true,
  duplicate: true,
  bad_signature: true,
  stale_request_time: true,
  future_request_time: true,
  changed_body: true,
  legacy_kind: true,
  within_timeout: true,
};

describe(`webhook go-live check (${databaseKind})`, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  const receivers: Receiver[] = [];

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_TIMEOUT_MS: String(timeoutMs) } });
    merchant = await ctx.merchant();
  });
  after(async () => {
    await Promise.all(receivers.map((receiver) => receiver.close()));
    await ctx.close();
  });

  /** A merchant receiver as the docs advise: verify (signature and time, on the service's clock), then answer. */
  function verifying(token: () => string, options: { checkTime?: boolean; dedupeRefuses?: boolean } = {}): Responder {
    const seen = new Set<string>();
    return (request) => {
      try {
        const event = verifyWebhook({
          headers: request.headers,
          rawBody: request.rawBody,
          token: token(),
          now: ctx.clock.now(),
          toleranceSeconds: options.checkTime === false ? 1e9 : 180,
        });
        if (options.dedupeRefuses && seen.has(event.id)) return { status: 409, body: 'already seen' };
        seen.add(event.id);
        return { status: 200, body: 'success' };
      } catch (err) {
        return { status: 401, body: (err as Error).message };
      }
    };
  }

  async function endpointWith(responder: Responder, extra: Record<string, unknown> = {}) {
    let token = '';
    const receiver = await startReceiver((request) => responder(request));
    receivers.push(receiver);
    const created = await merchant.call('POST', '/webhook_endpoints/create', { url: receiver.url(), ...extra });
    assert.equal(created.status, 200, created.raw);
    token = created.body.data.token;
    return { id: created.body.data.id as string, receiver, token: () => token, setToken: (t: string) => (token = t) };
  }

  test('a receiver that verifies signature and time passes every case; the bodies are marked as tests', async () => {
    const holder = { token: '' };
    const endpoint = await endpointWith(verifying(() => holder.token));
    holder.token = endpoint.token();
    const checked = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`);
    assert.equal(checked.status, 200, checked.raw);
    assert.deepEqual(verdicts(checked.body.data), allPass, checked.raw);
    assert.equal(checked.body.data.passed, true);
    assert.match(checked.body.data.id, /^whc_\d{19}$/);
    assert.equal(endpoint.receiver.requests.length, 7);
    for (const request of endpoint.receiver.requests) {
      assert.ok(endpoint.receiver.rawHeader(request, 'Request-Time'));
      assert.ok(endpoint.receiver.rawHeader(request, 'Signature'));
      assert.equal(endpoint.receiver.rawHeader(request, 'Content-Type'), 'application/json');
      const body = JSON.parse(request.body);
      assert.equal(body.test, true);
      // docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: every webhook body carries `sequence`, so a receiver's stale-event check is checked too.
      assert.equal(body.sequence, 1);
      assert.match(body.id, /^chk_\d{19}$/);
      assert.match(body.data.id, /^chk_\d{19}$/);
    }
    // The duplicate repeats the valid delivery's body byte for byte.
    assert.equal(endpoint.receiver.requests[1]!.body, endpoint.receiver.requests[0]!.body);
    // The test object exists nowhere.
    const objectId = JSON.parse(endpoint.receiver.requests[0]!.body).data.id;
    assert.equal((await merchant.call('GET', `/payment/${objectId}`)).status, 404);
  });

  test('a lower-case signatureCase endpoint is checked with lower-case signatures', async () => {
    const holder = { token: '' };
    const endpoint = await endpointWith(
      verifying(() => holder.token),
      { signatureCase: 'lower' },
    );
    holder.token = endpoint.token();
    const checked = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`, {});
    assert.deepEqual(verdicts(checked.body.data), allPass, checked.raw);
    const signature = endpoint.receiver.rawHeader(endpoint.receiver.requests[0]!, 'Signature')!;
    assert.equal(signature, signature.toLowerCase());
  });

  test('a receiver that answers success to everything fails each negative case with its reason', async () => {
    const endpoint = await endpointWith(() => ({ status: 200, body: 'success' }));
    const checked = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`);
    assert.deepEqual(verdicts(checked.body.data), {
      ...allPass,
      bad_signature: false,
      stale_request_time: false,
      future_request_time: false,
      changed_body: false,
      legacy_kind: false,
    });
    assert.equal(checked.body.data.passed, false);
    const reasons = Object.fromEntries(checked.body.data.cases.map((item: any) => [item.name, item.reason]));
    assert.match(reasons.bad_signature, /Answered "success" to a delivery whose Signature was made with another token/);
    assert.match(reasons.stale_request_time, /4 minutes old/);
    assert.match(reasons.future_request_time, /4 minutes ahead/);
    assert.match(reasons.changed_body, /altered after it was signed/);
    assert.match(reasons.legacy_kind, /legacy/);
  });

  test('a receiver without a time check fails the skew cases; one that refuses duplicates fails the duplicate', async () => {
    const holder = { token: '' };
    const noTime = await endpointWith(verifying(() => holder.token, { checkTime: false }));
    holder.token = noTime.token();
    const first = await merchant.call('POST', `/webhook_endpoints/${noTime.id}/check`);
    assert.deepEqual(verdicts(first.body.data), { ...allPass, stale_request_time: false, future_request_time: false });

    const holder2 = { token: '' };
    const dedupe = await endpointWith(verifying(() => holder2.token, { dedupeRefuses: true }));
    holder2.token = dedupe.token();
    const second = await merchant.call('POST', `/webhook_endpoints/${dedupe.id}/check`);
    assert.deepEqual(verdicts(second.body.data), { ...allPass, duplicate: false });
    const duplicate = second.body.data.cases.find((item: any) => item.name === 'duplicate');
    assert.equal(duplicate.httpStatus, 409);
    assert.match(duplicate.reason, /must be acknowledged again/);
  });

  test('a receiver slower than the timeout fails within_timeout and the valid case', async () => {
    const endpoint = await endpointWith(() => ({ status: 200, body: 'success', delayMs: timeoutMs + 300 }));
    const checked = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`);
    const byName = verdicts(checked.body.data);
    assert.equal(byName.within_timeout, false);
    assert.equal(byName.valid, false);
    const late = checked.body.data.cases.find((item: any) => item.name === 'within_timeout');
    assert.match(late.reason, new RegExp(`Not answered within ${timeoutMs} ms: valid, duplicate`));
  });

  test('a receiver that does not answer at all (stopped) fails within_timeout, naming why', async () => {
    const endpoint = await endpointWith(() => ({ status: 200, body: 'success' }));
    await endpoint.receiver.close();
    const checked = await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`);
    assert.equal(checked.status, 200, checked.raw);
    const byName = verdicts(checked.body.data);
    assert.equal(byName.within_timeout, false);
    assert.equal(checked.body.data.passed, false);
    const unanswered = checked.body.data.cases.find((item: any) => item.name === 'within_timeout');
    assert.match(unanswered.reason, /Not answered within \d+ ms: valid \(no answer: [^)]+\), duplicate \(no answer/);
  });

  test('the dynamic endpoint is checked at a url given in the body, and needs one', async () => {
    const listed = await merchant.call('GET', '/webhook_endpoints?limit=100');
    const dynamic = listed.body.data.data.find((row: any) => row.kind === 'dynamic');
    const missing = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/check`, {});
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'invalid_request');
    assert.equal(missing.body.data.param, 'url');
    const bad = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/check`, { url: 'ftp://example.com/x' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.data.param, 'url');

    const revealed = await merchant.call('GET', `/webhook_endpoints/${dynamic.id}/reveal_token`);
    const token = revealed.body.data.token;
    const receiver = await startReceiver(verifying(() => token));
    receivers.push(receiver);
    const checked = await merchant.call('POST', `/webhook_endpoints/${dynamic.id}/check`, {
      url: receiver.url('/notify'),
    });
    assert.deepEqual(verdicts(checked.body.data), allPass, checked.raw);
    assert.equal(checked.body.data.url, receiver.url('/notify'));
  });

  test('checks are stored and listed per endpoint, newest first, with cursor pagination', async () => {
    const endpoint = await endpointWith(() => ({ status: 500, body: 'down' }));
    const ids: string[] = [];
    for (let index = 0; index < 3; index++) {
      ctx.clock.advance(1000);
      ids.push((await merchant.call('POST', `/webhook_endpoints/${endpoint.id}/check`)).body.data.id);
    }
    const page = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}/checks?limit=2`);
    assert.equal(page.status, 200, page.raw);
    assert.deepEqual(
      page.body.data.data.map((row: any) => row.id),
      [ids[2], ids[1]],
    );
    assert.equal(page.body.data.hasMore, true);
    assert.equal(page.body.data.data[0].passed, false);
    assert.equal(page.body.data.data[0].cases.length, 8);
    const next = await merchant.call('GET', `/webhook_endpoints/${endpoint.id}/checks?limit=2&startingAfter=${ids[1]}`);
    assert.deepEqual(
      next.body.data.data.map((row: any) => row.id),
      [ids[0]],
    );
    const other = await ctx.merchant();
    assert.equal((await other.call('GET', `/webhook_endpoints/${endpoint.id}/checks`)).status, 404);
    assert.equal((await other.call('POST', `/webhook_endpoints/${endpoint.id}/check`)).status, 404);
  });
});
