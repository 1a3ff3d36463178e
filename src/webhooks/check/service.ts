import type { Clock } from '../../clock.js';
import type { Db } from '../../db/db.js';
import { canonicalJson } from '../../events/canonical-json.js';
import type { MerchantContext } from '../../core/merchant-context.js';
import type { Page } from '../../core/page.js';
import { invalidField } from '../../core/errors.js';
import { newId } from '../../ids.js';
import { isoTimestamp } from '../../time.js';
import * as queries from './queries.js';
import type { CheckCaseName, ListChecksQuery, RunCheckBody, WebhookCheck, WebhookCheckCase } from './schemas.js';
import type { WebhookEndpointService } from '../endpoints/service.js';
import { generateSecret } from '../endpoints/secrets.js';
import type { WebhookHttpClient, WebhookPostOutcome } from '../http-client.js';
import {
  formatRequestTime,
  generateEd25519KeyPair,
  signStandardWebhook,
  tokenAlgorithm,
  signWebhook,
  type SignatureCase,
  type WebhookFormat,
} from '../signature.js';
import { sendingAddressesView } from '../egress/sending-addresses.js';

/*
 * The go-live check (issue 12, docs/webhooks.md#go-live-check): test deliveries to a merchant's endpoint, each with the
 * real headers and signing, and a verdict per case on what the endpoint answered. The bodies carry
 * `"test": true` and ids of the form chk_… that are stored nowhere, so a merchant's code cannot
 * take them for real payments.
 */

/**
 * docs/webhooks.md#what-is-sent advises three minutes either way; the check's skewed cases are a minute beyond that.
 * Standard Webhooks libraries accept five minutes: the standard format's skewed cases are six.
 */
const skewSecondsOf: Record<WebhookFormat, number> = { moneycollect: 4 * 60, standard: 6 * 60 };

export interface WebhookCheckServiceDeps {
  db: Db;
  clock: Clock;
  webhookEndpoints: Pick<WebhookEndpointService, 'retrieve' | 'tokenFor' | 'legacyKeyFor' | 'requireAllowedUrl'>;
  httpClient: WebhookHttpClient;
  /** docs/webhooks.md#sending-addresses-allow-lists: the addresses the live deliveries come from, shown with every check. */
  sendingAddresses: readonly string[];
  /** The delivery timeout (docs/webhooks.md#acknowledgement-and-retries: 10 s): an answer later than this fails `within_timeout`. */
  timeoutMs: number;
}

/** One test delivery: what is sent, and whether `success` is the right answer. */
interface TestDelivery {
  name: Exclude<CheckCaseName, 'within_timeout'>;
  wantSuccess: boolean;
  /** The headers of a real delivery in the endpoint's format (docs/webhooks.md#what-is-sent, docs/webhooks.md#standard-webhooks-format). */
  headers: Record<string, string>;
  body: string;
}

/** What the check signs with, and how (the endpoint's format and letter case). */
interface Signing {
  token: string;
  legacyKey: string;
  letterCase: SignatureCase;
  format: WebhookFormat;
}

/** docs/webhooks.md#what-is-sent headers, as the legacy kind and moneycollect-format endpoints get them. */
function moneycollectHeaders(key: string, at: Date, body: string, letterCase: SignatureCase): Record<string, string> {
  const requestTime = formatRequestTime(at);
  return {
    'Content-Type': 'application/json',
    'Request-Time': requestTime,
    Signature: signWebhook(key, requestTime, body, letterCase),
  };
}

/** Standard Webhooks headers (docs/webhooks.md#standard-webhooks-format); the message id is the test event's id. */
function standardHeaders(key: string, at: Date, body: string): Record<string, string> {
  const messageId = (JSON.parse(body) as { id: string }).id;
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'Content-Type': 'application/json',
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signStandardWebhook([key], messageId, timestamp, body),
  };
}

interface Sent {
  delivery: TestDelivery;
  outcome: WebhookPostOutcome;
  latencyMs: number;
}

/**
 * The test event: shaped like a payment.succeeded notification (with its `sequence`, docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one: 1,
 * the first event of an object that exists nowhere else), marked as a test, about nothing real.
 */
function testEvent(eventId: string, objectId: string, type: string, created: string, amount: string) {
  return {
    id: eventId,
    apiVersion: 'v1',
    type,
    created,
    sequence: 1,
    test: true,
    data: { id: objectId, object: 'payment', amount, currency: 'USD', status: 'succeeded', test: true },
  };
}

/** A fresh key of the same kind as `token` (docs/decisions/0026: `whsk_` ed25519 or `whsec_` HMAC). */
function otherKeyLike(token: string): string {
  return tokenAlgorithm(token) === 'ed25519' ? generateEd25519KeyPair().secretKey : generateSecret('whsec_');
}

/**
 * `legacyOn`: the endpoint receives the legacy kind (legacyNotifications). docs/decisions/0014-legacy-opt-in-and-sequence.md: it must then
 * acknowledge it (`success`, without processing it), or every event's legacy notification is
 * retried for 25 hours; without it, a notification that does not verify is refused like any other.
 */
function plan(now: Date, signing: Signing, legacyOn: boolean): TestDelivery[] {
  const { token, legacyKey, letterCase, format } = signing;
  const created = isoTimestamp(now);
  const objectId = newId('chk');
  const eventId = newId('chk');
  const body = canonicalJson(testEvent(eventId, objectId, 'endpoint_payment.payment_succeeded', created, '100'));
  const legacyBody = canonicalJson(testEvent(newId('chk'), objectId, 'payment.succeeded', created, '100'));
  const skewSeconds = skewSecondsOf[format];
  const at = (offsetSeconds: number) => new Date(now.getTime() + offsetSeconds * 1000);
  const signed = (name: TestDelivery['name'], wantSuccess: boolean, key: string, time: Date, text = body) => ({
    name,
    wantSuccess,
    headers:
      format === 'standard' ? standardHeaders(key, time, text) : moneycollectHeaders(key, time, text, letterCase),
    body: text,
  });
  // Each negative case has its own event id, so that a receiver that deduplicates by id before it
  // verifies is judged on its verification, not on its memory of the valid delivery.
  const other = () =>
    canonicalJson(testEvent(newId('chk'), objectId, 'endpoint_payment.payment_succeeded', created, '100'));
  const changedFrom = other();
  return [
    signed('valid', true, token, at(0)),
    // A retry repeats the body byte for byte with a new request-time (docs/webhooks.md#sequence-telling-a-stale-event-from-a-new-one).
    signed('duplicate', true, token, at(0)),
    // Another key of the endpoint's own algorithm: an ed25519 receiver then sees a well-formed `v1a,`
    // signature that its public key does not verify.
    signed('bad_signature', false, otherKeyLike(token), at(0), other()),
    signed('stale_request_time', false, token, at(-skewSeconds), other()),
    signed('future_request_time', false, token, at(skewSeconds), other()),
    {
      ...signed('changed_body', false, token, at(0), changedFrom),
      // Signed, then a field altered, as a man in the middle would.
      body: changedFrom.replace('"amount":"100"', '"amount":"100000"'),
    },
    // The legacy kind is always sent as docs/webhooks.md#what-is-sent writes (docs/decisions/0014-legacy-opt-in-and-sequence.md), whatever the endpoint's format.
    {
      name: 'legacy_kind',
      wantSuccess: legacyOn,
      headers: moneycollectHeaders(legacyKey, at(0), legacyBody, letterCase),
      body: legacyBody,
    },
  ];
}

const wrongAnswerReasons: Record<TestDelivery['name'], string> = {
  valid: 'a correctly signed delivery',
  duplicate: 'a repeat of the valid delivery (same body and id); it must be acknowledged again',
  bad_signature: 'a delivery whose Signature was made with another token',
  stale_request_time:
    'a correctly signed delivery whose Request-Time is 4 minutes old (docs/webhooks.md#what-is-sent: 3 minutes at most; ' +
    'standard format: webhook-timestamp 6 minutes old, 5 at most)',
  future_request_time:
    'a correctly signed delivery whose Request-Time is 4 minutes ahead (docs/webhooks.md#what-is-sent: 3 minutes at most; ' +
    'standard format: webhook-timestamp 6 minutes ahead, 5 at most)',
  changed_body: 'a delivery whose body was altered after it was signed',
  legacy_kind:
    'the legacy notification kind, signed with the legacy key (docs/webhooks.md#what-is-sent: new integrations ignore it)',
};

/** The legacy kind to an endpoint that asked for it (legacyNotifications on). */
const legacyOnReason =
  'the legacy notification kind, which this endpoint receives (legacyNotifications on): it is acknowledged ' +
  'with "success" and not processed (docs/webhooks.md#what-is-sent), or it is retried for 25 hours';

function judge({ delivery, outcome, latencyMs }: Sent): WebhookCheckCase {
  const what =
    delivery.name === 'legacy_kind' && delivery.wantSuccess ? legacyOnReason : wrongAnswerReasons[delivery.name];
  const base = { name: delivery.name, httpStatus: outcome.ok ? outcome.status : null, latencyMs };
  if (!outcome.ok) {
    return {
      ...base,
      passed: false,
      reason: `No answer to ${what}: ${outcome.error}`,
    };
  }
  // docs/webhooks.md#acknowledgement-and-retries: acknowledged = HTTP 2xx and a body that is `success`, surrounding white space ignored.
  const acknowledged = outcome.status >= 200 && outcome.status < 300 && outcome.body.trim() === 'success';
  const answer = `HTTP ${outcome.status}${acknowledged ? ' success' : ''}`;
  if (delivery.wantSuccess) {
    return acknowledged
      ? { ...base, passed: true, reason: `Answered ${answer} to ${what}` }
      : {
          ...base,
          passed: false,
          reason: `Answered ${answer} with a body other than "success" to ${what}; it must be answered 2xx "success"`,
        };
  }
  return acknowledged
    ? {
        ...base,
        passed: false,
        reason: `Answered "success" to ${what}: the receiver must refuse it (verify the signature and the time first)`,
      }
    : { ...base, passed: true, reason: `Refused (${answer}) ${what}` };
}

function timeoutCase(sent: readonly Sent[], timeoutMs: number): WebhookCheckCase {
  const slowest = sent.reduce((max, item) => (item.latencyMs > max.latencyMs ? item : max), sent[0]!);
  // A delivery that got no answer at all (connection refused or reset, the receiver stopped) was
  // not answered in time either: the case passes only when every delivery was answered.
  const late = sent.filter((item) => item.latencyMs >= timeoutMs || !item.outcome.ok);
  return {
    name: 'within_timeout',
    passed: late.length === 0,
    httpStatus: null,
    latencyMs: slowest.latencyMs,
    reason:
      late.length === 0
        ? `Every test delivery was answered within ${timeoutMs} ms (slowest: ${slowest.delivery.name}, ${slowest.latencyMs} ms)`
        : `Not answered within ${timeoutMs} ms: ${late
            .map((item) =>
              item.outcome.ok || /within/.test(item.outcome.error)
                ? item.delivery.name
                : `${item.delivery.name} (no answer: ${item.outcome.error})`,
            )
            .join(', ')}`,
  };
}

function toWebhookCheck(row: queries.CheckRow): Omit<WebhookCheck, 'sendingAddresses'> {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    url: row.url,
    passed: row.passed,
    cases: row.cases as WebhookCheckCase[],
    created: isoTimestamp(row.created_at),
  };
}

export function createWebhookCheckService({
  db,
  clock,
  webhookEndpoints,
  httpClient,
  timeoutMs,
  sendingAddresses,
}: WebhookCheckServiceDeps) {
  const addresses = sendingAddressesView(sendingAddresses);
  const withAddresses = (row: queries.CheckRow): WebhookCheck => ({
    ...toWebhookCheck(row),
    sendingAddresses: addresses,
  });
  return {
    /** Sends the test deliveries one after the other (the duplicate after the valid one) and stores the verdicts. */
    async run(merchant: MerchantContext, endpointId: string, input: RunCheckBody): Promise<WebhookCheck> {
      const endpoint = await webhookEndpoints.retrieve(merchant, endpointId);
      const url = input.url ?? endpoint.url;
      if (url === null) {
        throw invalidField(
          'url',
          'url is required to check the dynamic endpoint: give the notifyUrl your payments use',
        );
      }
      await webhookEndpoints.requireAllowedUrl(url);
      const token = await webhookEndpoints.tokenFor(endpoint.id);
      const legacyKey = await webhookEndpoints.legacyKeyFor(merchant.merchantId);
      const sent: Sent[] = [];
      const signing = { token, legacyKey, letterCase: endpoint.signatureCase, format: endpoint.format };
      for (const delivery of plan(clock.now(), signing, endpoint.legacyNotifications)) {
        // The headers of a real delivery, with the capitalisations (docs/webhooks.md#what-is-sent).
        const outcome = await httpClient.post(url, delivery.headers, delivery.body);
        sent.push({ delivery, outcome, latencyMs: outcome.durationMs });
      }
      const cases = [...sent.map(judge), timeoutCase(sent, timeoutMs)];
      const row: queries.NewCheck = {
        id: newId('whc'),
        merchant_id: merchant.merchantId,
        mode: merchant.mode,
        endpoint_id: endpoint.id,
        url,
        passed: cases.every((item) => item.passed),
        cases,
        created_at: clock.now(),
      };
      await queries.insertCheck(db, row);
      return withAddresses(row);
    },

    async list(merchant: MerchantContext, endpointId: string, query: ListChecksQuery): Promise<Page<WebhookCheck>> {
      // Answers 404 for an endpoint that is not the merchant's.
      await webhookEndpoints.retrieve(merchant, endpointId);
      const { rows, hasMore } = await queries.selectCheckPage(
        db,
        { merchantId: merchant.merchantId, mode: merchant.mode, endpointId },
        query,
      );
      return { data: rows.map(withAddresses), hasMore };
    },
  };
}

export type WebhookCheckService = ReturnType<typeof createWebhookCheckService>;
