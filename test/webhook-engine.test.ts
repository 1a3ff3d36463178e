/*
 * The delivery engine's parts on their own, without a Tessera: the attempt against a real local
 * receiver, the recorder's retry schedule, the scheduler's slot accounting and token cache.
 * test/webhook-delivery.test.ts checks the parts together through the API and the database.
 */
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultWebhookRetryDelaysSeconds } from '../src/config.js';
import { attemptDelivery, type AttemptRequest, type AttemptResult } from '../src/webhooks/engine/attempt.js';
import type { Leased } from '../src/webhooks/engine/claimer.js';
import type { ClaimedDelivery } from '../src/webhooks/engine/queries.js';
import { nextAttemptAfter, recordOf } from '../src/webhooks/engine/recorder.js';
import { createSlots } from '../src/webhooks/engine/slots.js';
import { createTokenCache } from '../src/webhooks/engine/token-cache.js';
import { createWebhookHttpClient, type WebhookHttpClient } from '../src/webhooks/http-client.js';
import { refusingUrl, startReceiver, type Receiver } from './helpers/receiver.js';

/** The timeout test's client waits this long; the other tests' clients long enough for a loaded CI machine. */
const timeoutMs = 500;
const answerTimeoutMs = 15_000;
/** docs/webhooks.md#acknowledgement-and-retries, written out here rather than taken from the code under test. */
const specRetryDelaysSeconds = [30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 28800];
const token = 'whsec_unit_test_token';

function delivery(overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return {
    id: 'wd_1',
    merchant_id: 'mer_1',
    endpoint_id: 'we_1',
    kind: 'endpoint',
    body: '{"id":"evt_1","type":"endpoint_payment.succeeded"}',
    attempts: 0,
    target: 'http://127.0.0.1:1/a',
    send_url: 'http://127.0.0.1:1/a',
    endpoint_state: 'enabled',
    token_ciphertext: 'cipher-1',
    signature_case: 'upper',
    event_id: 'evt_1',
    format: 'moneycollect',
    previous_token_ciphertext: null,
    previous_token_expires_at: null,
    time_factor: 1,
    ...overrides,
  };
}

function leased(overrides: Partial<ClaimedDelivery> = {}, leaseUntil = new Date('2026-11-23T12:10:00Z')): Leased {
  return { delivery: delivery(overrides), leaseUntil };
}

describe('the attempt: sign, POST, classify', () => {
  let receiver: Receiver;
  let client: WebhookHttpClient;
  let hurried: WebhookHttpClient;
  const attemptedAt = new Date('2026-11-23T12:00:00.250Z');
  const body = '{"id":"evt_1","amount":1000}';

  const request = (overrides: Partial<AttemptRequest> = {}): AttemptRequest => ({
    endpointState: 'enabled',
    url: receiver.url(),
    body,
    signatureCase: 'upper',
    attemptedAt,
    signingKey: async () => token,
    ...overrides,
  });

  async function answered(status: number, answer: string): Promise<AttemptResult> {
    receiver.respond(() => ({ status, body: answer }));
    return attemptDelivery(client, request());
  }

  before(async () => {
    receiver = await startReceiver();
    client = createWebhookHttpClient({ timeoutMs: answerTimeoutMs, production: false });
    hurried = createWebhookHttpClient({ timeoutMs, production: false });
  });
  after(() => Promise.all([client.close(), hurried.close(), receiver.close()]));

  test('a 2xx `success` is delivered; the request is signed over request-time and the exact body', async () => {
    const sent = receiver.requests.length;
    const result = await answered(200, '  success\n');
    assert.deepEqual(
      { ...result, durationMs: 0 },
      { succeeded: true, giveUp: false, httpStatus: 200, responseExcerpt: '  success\n', error: null, durationMs: 0 },
    );
    const [received] = receiver.requests.slice(sent);
    assert.ok(received);
    assert.equal(received.body, body);
    assert.equal(receiver.rawHeader(received, 'Content-Type'), 'application/json');
    assert.equal(receiver.rawHeader(received, 'Request-Time'), '2026-11-23T12:00:00');
    const expected = createHmac('sha256', token).update(`2026-11-23T12:00:00.${body}`).digest('hex');
    assert.equal(receiver.rawHeader(received, 'Signature'), expected.toUpperCase());

    await attemptDelivery(client, request({ signatureCase: 'lower' }));
    assert.equal(receiver.rawHeader(receiver.requests.at(-1)!, 'Signature'), expected);
  });

  test('a 2xx whose body is not `success` fails, with the answer kept for the log', async () => {
    const result = await answered(204, '');
    assert.equal(result.succeeded, false);
    assert.equal(result.giveUp, false);
    assert.equal(result.httpStatus, 204);
    assert.equal(result.error, 'The response body is not "success"');
    const ok = await answered(200, 'OK');
    assert.deepEqual([ok.succeeded, ok.responseExcerpt, ok.error], [false, 'OK', 'The response body is not "success"']);
  });

  test('a 3xx is a failure and is not followed', async () => {
    const sent = receiver.requests.length;
    receiver.respond(() => ({ status: 302, body: 'success', headers: { location: receiver.url('/elsewhere') } }));
    const result = await attemptDelivery(client, request());
    assert.deepEqual(
      [result.succeeded, result.httpStatus, result.error],
      [false, 302, 'The endpoint answered HTTP 302, not 2xx'],
    );
    assert.equal(receiver.requests.length, sent + 1, 'the redirect was not followed');
  });

  test('a 4xx or 5xx is a failure naming the status, even with a `success` body', async () => {
    for (const status of [400, 410, 500, 503]) {
      const result = await answered(status, 'success');
      assert.deepEqual(
        [result.succeeded, result.giveUp, result.httpStatus, result.responseExcerpt, result.error],
        [false, false, status, 'success', `The endpoint answered HTTP ${status}, not 2xx`],
      );
    }
  });

  test('no complete answer within the timeout is a failure without a status', async () => {
    receiver.respond(() => ({ status: 200, body: 'success', delayMs: timeoutMs * 4 }));
    const result = await attemptDelivery(hurried, request());
    assert.deepEqual(
      [result.succeeded, result.httpStatus, result.responseExcerpt, result.error],
      [false, null, null, `No complete response within ${timeoutMs} ms`],
    );
  });

  test('a refused connection is a failure without a status', async () => {
    const result = await attemptDelivery(client, request({ url: await refusingUrl() }));
    assert.deepEqual(
      [result.succeeded, result.giveUp, result.httpStatus, result.error],
      [false, false, null, 'Connection refused'],
    );
  });

  test('an oversized answer is read in part: a failure with its first 1 KiB kept', async () => {
    const result = await answered(200, 'x'.repeat(1024 * 1024));
    assert.equal(result.succeeded, false);
    assert.equal(result.httpStatus, 200);
    assert.equal(result.responseExcerpt, 'x'.repeat(1024));
    assert.equal(result.error, 'The response body is not "success"');
  });

  test('a disabled or deleted endpoint is given up without a request or a key', async () => {
    const sent = receiver.requests.length;
    for (const endpointState of ['disabled', 'deleted'] as const) {
      const result = await attemptDelivery(
        client,
        request({ endpointState, signingKey: () => assert.fail('the key is not read') }),
      );
      assert.deepEqual(result, {
        succeeded: false,
        giveUp: true,
        httpStatus: null,
        responseExcerpt: null,
        error: `Not sent: the webhook endpoint was ${endpointState}`,
        durationMs: 0,
      });
    }
    assert.equal(receiver.requests.length, sent);
  });

  test('a signing key that cannot be read is a failure to retry, not a request', async () => {
    const sent = receiver.requests.length;
    const cause = new Error('vault unavailable');
    const result = await attemptDelivery(client, request({ signingKey: () => Promise.reject(cause) }));
    assert.equal(result.succeeded, false);
    assert.equal(result.giveUp, false);
    assert.equal(result.error, 'Not sent: Tessera could not read the signing key (internal error)');
    assert.equal(result.keyError, cause);
    assert.doesNotMatch(result.error ?? '', /vault unavailable/);
    assert.equal(receiver.requests.length, sent);
  });
});

describe('the recorder: the next attempt and the delivery state', () => {
  const attemptedAt = new Date('2026-11-23T12:00:00.000Z');
  const failure: AttemptResult = {
    succeeded: false,
    giveUp: false,
    httpStatus: 500,
    responseExcerpt: 'oops',
    error: 'The endpoint answered HTTP 500, not 2xx',
    durationMs: 12,
  };
  const outcome = (result: AttemptResult, overrides: Partial<ClaimedDelivery> = {}) => ({
    leased: leased(overrides),
    attemptedAt,
    result,
    attemptId: 'wa_1',
    now: new Date('2026-11-23T12:00:01Z'),
  });

  test('the default retry delays are docs/webhooks.md#acknowledgement-and-retries exactly', () => {
    assert.deepEqual([...defaultWebhookRetryDelaysSeconds], specRetryDelaysSeconds);
  });

  test('each retry follows the previous attempt by the next delay, and attempt 13 is the last', () => {
    specRetryDelaysSeconds.forEach((delaySeconds, index) => {
      const next = nextAttemptAfter(specRetryDelaysSeconds, index + 1, attemptedAt, 1);
      assert.equal(next?.getTime(), attemptedAt.getTime() + delaySeconds * 1000, `after attempt ${index + 1}`);
    });
    assert.equal(nextAttemptAfter(specRetryDelaysSeconds, 13, attemptedAt, 1), null);
  });

  test('a fast-forwarded delivery waits each delay divided by its factor, rounded up to the millisecond', () => {
    assert.equal(nextAttemptAfter(specRetryDelaysSeconds, 1, attemptedAt, 3600)?.getTime(), attemptedAt.getTime() + 9);
    assert.equal(
      nextAttemptAfter(specRetryDelaysSeconds, 12, attemptedAt, 86_400)?.getTime(),
      attemptedAt.getTime() + 334,
    );
    // A factor below 1 never slows the schedule down.
    assert.equal(
      nextAttemptAfter(specRetryDelaysSeconds, 1, attemptedAt, 0)?.getTime(),
      attemptedAt.getTime() + 30_000,
    );
  });

  test('a failed attempt with retries left keeps the delivery pending until the next one', () => {
    const record = recordOf(
      specRetryDelaysSeconds,
      outcome(failure, { attempts: 2, send_url: 'https://new.example/' }),
    );
    assert.deepEqual(record, {
      deliveryId: 'wd_1',
      leaseUntil: new Date('2026-11-23T12:10:00Z'),
      attemptId: 'wa_1',
      attemptNumber: 3,
      attemptedAt,
      durationMs: 12,
      httpStatus: 500,
      responseExcerpt: 'oops',
      error: 'The endpoint answered HTTP 500, not 2xx',
      succeeded: false,
      status: 'pending',
      nextAttemptAt: new Date(attemptedAt.getTime() + 120_000),
      url: 'https://new.example/',
      now: new Date('2026-11-23T12:00:01Z'),
      endpointId: 'we_1',
      countsForHealth: true,
    });
  });

  test('the 13th failed attempt fails the delivery; a success or a give-up ends it at once', () => {
    const last = recordOf(specRetryDelaysSeconds, outcome(failure, { attempts: 12 }));
    assert.deepEqual([last.attemptNumber, last.status, last.nextAttemptAt], [13, 'failed', null]);
    const success = { ...failure, succeeded: true, httpStatus: 200, error: null };
    const delivered = recordOf(specRetryDelaysSeconds, outcome(success));
    assert.deepEqual([delivered.status, delivered.nextAttemptAt, delivered.succeeded], ['succeeded', null, true]);
    const giveUp = { ...failure, giveUp: true, httpStatus: null };
    const ended = recordOf(specRetryDelaysSeconds, outcome(giveUp));
    assert.deepEqual([ended.attemptNumber, ended.status, ended.nextAttemptAt], [1, 'failed', null]);
    // Not sent because the endpoint was disabled: it says nothing of the receiver's health.
    assert.equal(ended.countsForHealth, false);
  });
});

describe("the scheduler's slot accounting", () => {
  const notLate = () => false;
  const claim = (target: string, count: number, extra: Partial<ClaimedDelivery> = {}) =>
    Array.from({ length: count }, (_, index) => delivery({ id: `wd_${target}_${index}`, target, ...extra }));
  const leaseUntil = new Date('2026-11-23T12:10:00Z');

  test('a target never has more than its cap in flight; an answer frees one slot', () => {
    const slots = createSlots({ concurrencyPerTarget: 2, maxInFlight: 10 });
    assert.deepEqual([...slots.enqueue(claim('a', 5), leaseUntil)], [['a', 5]]);
    assert.equal(slots.take('a', notLate).send.length, 2);
    assert.equal(slots.take('a', notLate).send.length, 0, 'at its cap');
    assert.equal(slots.inFlight(), 2);
    assert.equal(slots.answered('a'), false);
    assert.deepEqual(
      slots.take('a', notLate).send.map((next) => next.delivery.id),
      ['wd_a_2'],
      'the next in claim order',
    );
    assert.equal(slots.held(), 4);
  });

  test('the process-wide limit holds a target back until another answer frees room', () => {
    const slots = createSlots({ concurrencyPerTarget: 2, maxInFlight: 3 });
    slots.enqueue([...claim('a', 2), ...claim('b', 2)], leaseUntil);
    assert.equal(slots.take('a', notLate).send.length, 2);
    assert.equal(slots.take('b', notLate).send.length, 1);
    assert.equal(slots.hasRoomInFlight(), false);
    assert.deepEqual(slots.waitingTargets(), ['b']);
    assert.equal(slots.answered('a'), true, 'it was at the limit');
    assert.equal(slots.hasRoomInFlight(), true);
    slots.stopWaiting('b');
    assert.equal(slots.take('b', notLate).send.length, 1);
    assert.deepEqual(slots.waitingTargets(), []);
  });

  test('a delivery with too little lease left is not sent and no longer held', () => {
    const slots = createSlots({ concurrencyPerTarget: 2, maxInFlight: 10 });
    slots.enqueue(claim('a', 3), leaseUntil);
    const taken = slots.take('a', (next) => next.delivery.id === 'wd_a_0');
    assert.deepEqual(
      [taken.late.map((next) => next.delivery.id), taken.send.map((next) => next.delivery.id)],
      [['wd_a_0'], ['wd_a_1', 'wd_a_2']],
    );
    assert.equal(slots.held(), 2);
    assert.equal(slots.room(), 20 - 2);
  });

  test('a claim offers each target at most three times its cap, leaving saturated targets out', () => {
    const slots = createSlots({ concurrencyPerTarget: 2, maxInFlight: 10 });
    slots.enqueue([...claim('a', 6), ...claim('b', 1)], leaseUntil);
    slots.take('a', notLate);
    assert.equal(slots.heldPerTarget, 6);
    assert.deepEqual(slots.busy(), { busyTargets: ['a', 'b'], busyCounts: [6, 1], saturatedTargets: ['a'] });
    assert.equal(slots.room(), 20 - 7);
  });

  test('backlogged targets ask for a refill once a cap of room is free, within the room of the process', () => {
    const slots = createSlots({ concurrencyPerTarget: 2, maxInFlight: 4 });
    slots.enqueue([...claim('a', 6), ...claim('b', 1)], leaseUntil);
    slots.markBacklogged('a');
    slots.markBacklogged('b');
    assert.equal(slots.wantsRefill('a'), false, 'a holds all its share');
    assert.equal(slots.wantsRefill('b'), true);
    slots.take('a', notLate);
    slots.answered('a');
    slots.answered('a');
    assert.equal(slots.wantsRefill('a'), true);
    // The process may hold 8 and holds 5: a takes the 2 it has room for, b the 1 left.
    assert.deepEqual(slots.refillRequest(), { targets: ['a', 'b'], rooms: [2, 1] });
    slots.clearBacklog('a');
    assert.equal(slots.wantsRefill('a'), false);
  });

  test('a stop empties the queues: what was queued is no longer held, idle targets are forgotten', () => {
    const slots = createSlots({ concurrencyPerTarget: 1, maxInFlight: 10 });
    slots.enqueue([...claim('a', 3), ...claim('b', 2, { kind: 'legacy', endpoint_id: 'we_b' })], leaseUntil);
    slots.take('a', notLate);
    const queued = slots.releaseQueued();
    assert.equal(queued.length, 4);
    assert.equal(slots.held(), 1, 'the one in flight');
    assert.deepEqual(slots.busy().busyTargets, ['a']);
    slots.answered('a');
    slots.forgetIfIdle('a');
    assert.deepEqual(slots.busy().busyTargets, []);
    assert.equal(slots.answered('a'), undefined, 'forgotten');
  });
});

describe("the scheduler's token cache", () => {
  /** PGlite: this process's rolls are all told, none is read. */
  const oneProcess = { readBeforeEachAttempt: false };
  function source() {
    const decrypted: string[] = [];
    const reads: string[][] = [];
    let failNext = false;
    const stored = new Map([['we_1', 'cipher-stored']]);
    return {
      decrypted,
      reads,
      stored,
      failOnce: () => (failNext = true),
      async decryptToken(_endpointId: string, ciphertext: string) {
        decrypted.push(ciphertext);
        if (failNext) {
          failNext = false;
          throw new Error('cannot decrypt');
        }
        return `token-of-${ciphertext}`;
      },
      async tokenCiphertexts(endpointIds: readonly string[]) {
        reads.push([...endpointIds]);
        const row = (id: string) => ({
          id,
          token_encrypted: stored.get(id)!,
          previous_token_encrypted: null,
          previous_token_expires_at: null,
        });
        return new Map(endpointIds.flatMap((id) => (stored.has(id) ? [[id, row(id)] as const] : [])));
      },
      async legacyKeyFor(merchantId: string) {
        return `legacy-of-${merchantId}`;
      },
    };
  }

  test('a roll told after a claim signs the deliveries claimed before it', async () => {
    const tokens = createTokenCache(source(), oneProcess);
    tokens.learn('we_1', 'cipher-1', tokens.startLearning());
    assert.equal(await tokens.signingKeyOf(delivery()), 'token-of-cipher-1');
    tokens.rolled('we_1', 'cipher-2');
    assert.equal(await tokens.signingKeyOf(delivery({ token_ciphertext: 'cipher-1' })), 'token-of-cipher-2');
  });

  test('a read that started before a roll does not bring back the old token', async () => {
    const tokens = createTokenCache(source(), oneProcess);
    const claimStarted = tokens.startLearning();
    tokens.rolled('we_1', 'cipher-2');
    tokens.learn('we_1', 'cipher-1', claimStarted);
    assert.equal(await tokens.signingKeyOf(delivery()), 'token-of-cipher-2');
  });

  test('on PostgreSQL each attempt reads the token again: a roll in another process signs the next attempt', async () => {
    const endpoints = source();
    const tokens = createTokenCache(endpoints, { readBeforeEachAttempt: true });
    tokens.learn('we_1', 'cipher-1', tokens.startLearning());
    assert.equal(await tokens.signingKeyOf(delivery()), 'token-of-cipher-stored');
    endpoints.stored.set('we_1', 'cipher-rolled-elsewhere');
    assert.equal(await tokens.signingKeyOf(delivery()), 'token-of-cipher-rolled-elsewhere');
    assert.deepEqual(endpoints.reads, [['we_1'], ['we_1']]);
    assert.equal(
      await tokens.signingKeyOf(delivery({ kind: 'legacy' })),
      'legacy-of-mer_1',
      'no read for the legacy key',
    );
    assert.equal(endpoints.reads.length, 2);
  });

  test('attempts that start during a read share the next one, which starts after they did', async () => {
    const endpoints = source();
    endpoints.stored.set('we_2', 'cipher-of-2');
    const tokens = createTokenCache(endpoints, { readBeforeEachAttempt: true });
    const first = [tokens.signingKeyOf(delivery()), tokens.signingKeyOf(delivery({ endpoint_id: 'we_2' }))];
    // Started while the first read is under way: the roll it made before must be seen.
    await Promise.resolve();
    await Promise.resolve();
    endpoints.stored.set('we_1', 'cipher-rolled');
    const later = [tokens.signingKeyOf(delivery()), tokens.signingKeyOf(delivery({ id: 'wd_3' }))];
    assert.deepEqual(await Promise.all(first), ['token-of-cipher-stored', 'token-of-cipher-of-2']);
    assert.deepEqual(await Promise.all(later), ['token-of-cipher-rolled', 'token-of-cipher-rolled']);
    assert.deepEqual(endpoints.reads, [['we_1', 'we_2'], ['we_1']]);
  });

  test('each token is decrypted once, a failed decryption is tried again, legacy uses the legacy key', async () => {
    const endpoints = source();
    const tokens = createTokenCache(endpoints, oneProcess);
    endpoints.failOnce();
    await assert.rejects(tokens.signingKeyOf(delivery()), /cannot decrypt/);
    assert.equal(await tokens.signingKeyOf(delivery()), 'token-of-cipher-1');
    assert.equal(await tokens.signingKeyOf(delivery({ id: 'wd_2' })), 'token-of-cipher-1');
    assert.deepEqual(endpoints.decrypted, ['cipher-1', 'cipher-1']);
    assert.equal(await tokens.signingKeyOf(delivery({ kind: 'legacy' })), 'legacy-of-mer_1');
  });
});
