/**
 * docs/api.md#the-api-reference, issue 21: every example of the API reference is captured from a real run. This test
 * runs one scenario that calls every merchant operation — its request, its 200 answer, and one
 * real error answer (a misspelt field, an unknown id, a bad limit) — and fails when an answer's
 * shape (field names and JSON types) differs from the example the reference shows, or when an
 * operation of the OpenAPI document has no example. `npm run reference:capture` runs it with
 * TESSERA_UPDATE_REFERENCE_EXAMPLES=1: it writes src/http/reference-examples.json instead.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { capturedExamples, type CapturedExample } from '../src/http/reference-examples.js';
import type { ExampleRequest } from '../src/http/openapi-samples.js';
import {
  apiBase,
  databaseKind,
  injectRaw,
  startTestApp,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

const update = process.env.TESSERA_UPDATE_REFERENCE_EXAMPLES === '1';

/** `/payment/{id}/capture` → a pattern of its paths, each parameter's value captured. */
const templatePattern = (template: string) =>
  new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}/g, '([^/]+)')}$`);
const visa = '4242424242424242';

/** Field names and JSON types, recursively; a list by its first item. */
function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value as object)
        .sort()
        .map((key) => [key, shapeOf((value as Record<string, unknown>)[key])]),
    );
  }
  return typeof value;
}

describe(`API reference examples, captured from a real run (${databaseKind})`, () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  let receiver: Receiver;
  const captured: Record<string, CapturedExample> = {};

  before(async () => {
    ctx = await startTestApp({ env: { TESSERA_WEBHOOK_POLL_INTERVAL_MS: '600000' } });
    ctx.tessera.webhookDispatcher.stop();
    merchant = await ctx.merchant({ name: 'Example Shop' });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await ctx.close();
  });

  async function send(method: string, request: ExampleRequest) {
    const query = new URLSearchParams(request.query ?? {}).toString();
    const response = await injectRaw(ctx, {
      method: method as 'GET',
      url: `${apiBase}${request.path}${query ? `?${query}` : ''}`,
      headers: {
        authorization: `Bearer ${merchant.privateKey}`,
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
    });
    return { status: response.statusCode, answer: JSON.parse(response.body) as { data: any } };
  }

  /** The error request of an operation: an unknown id, a bad limit, or a misspelt first field. */
  function errorRequest(template: string, request: ExampleRequest): ExampleRequest {
    if (/\{\w+\}/.test(template)) {
      const path = request.path.replace(
        /\b([a-z]+)_\d{19}\b/,
        (_all, prefix: string) => `${prefix}_1000000000000000001`,
      );
      return { ...request, path };
    }
    if (request.body && typeof request.body === 'object' && Object.keys(request.body).length > 0) {
      const [first, ...rest] = Object.entries(request.body as Record<string, unknown>);
      return { ...request, body: Object.fromEntries([[`${first![0]}${first![0].slice(-1)}`, first![1]], ...rest]) };
    }
    return { ...request, query: { ...request.query, limit: '0' } };
  }

  /** Runs one operation's example and its error; answers the example's `data`. */
  async function run(key: string, request: ExampleRequest): Promise<any> {
    const [method, template] = key.split(' ') as [string, string];
    const success = await send(method, request);
    assert.equal(success.status, 200, `${key}: ${JSON.stringify(success.answer)}`);
    const failing = errorRequest(template, request);
    const error = await send(method, failing);
    assert.ok(error.status >= 400, `${key} error: ${error.status}`);
    captured[key] = {
      request,
      answer: success.answer,
      error: { status: error.status, request: failing, answer: error.answer },
    };
    ctx.clock.advance(1000);
    return success.answer.data;
  }

  /**
   * GET /events/stream over HTTP, since it stays open: its text up to the first event (a payment made
   * once it is connected), and an unknown event code in `types` as its error.
   */
  async function runStream(pay: () => Promise<unknown>): Promise<void> {
    const key = 'GET /events/stream';
    const request: ExampleRequest = { path: '/events/stream', query: { types: 'payment.succeeded' } };
    const address = await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    const abort = new AbortController();
    const response = await fetch(`${address}${apiBase}${request.path}?types=payment.succeeded`, {
      headers: { authorization: `Bearer ${merchant.privateKey}` },
      signal: abort.signal,
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) text += decoder.decode((await reader.read()).value, { stream: true });
    };
    await readUntil(/^: connected\n\n/);
    await pay();
    await readUntil(/\ndata: [^\n]*\n\n/);
    abort.abort();
    const answer = text.slice(0, text.indexOf('\n\n', text.indexOf('\ndata: ')) + 2);
    const failing: ExampleRequest = { ...request, query: { types: 'payment.succeded' } };
    const error = await send('GET', failing);
    assert.equal(error.status, 400, JSON.stringify(error.answer));
    captured[key] = { request, answer, error: { status: error.status, request: failing, answer: error.answer } };
  }

  test('every merchant operation runs its example, answers 200 and a real error', async () => {
    const customer = await run('POST /customers/create', {
      path: '/customers/create',
      body: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', merchantUserId: 'user-42' },
    });
    await run('GET /customers/{id}', { path: `/customers/${customer.id}` });
    await run('POST /customers/{id}/update', {
      path: `/customers/${customer.id}/update`,
      body: { phone: '+1 415 555 0100' },
    });
    const card = { cardNo: visa, expMonth: '12', expYear: '2030', securityCode: '123' };
    const method = await run('POST /payment_methods/create', {
      path: '/payment_methods/create',
      body: {
        type: 'card',
        card,
        billingDetails: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
      },
    });
    await run('GET /payment_methods/{id}', { path: `/payment_methods/${method.id}` });
    const payment = await run('POST /payment/create', {
      path: '/payment/create',
      body: {
        amount: '1999',
        currency: 'USD',
        customerId: customer.id,
        paymentMethod: method.id,
        confirm: 'true',
        setupFutureUsage: 'on',
        orderNo: 'order-1001',
        notifyUrl: receiver.url('/webhooks/tessera'),
      },
    });
    await run('GET /payment/{id}', { path: `/payment/${payment.id}` });
    await run('GET /payment', { path: '/payment', query: { customerId: customer.id, limit: '1' } });
    await run('GET /payment_methods/list/{customerId}', { path: `/payment_methods/list/${customer.id}` });
    await run('GET /customers', { path: '/customers', query: { limit: '1' } });

    const other = (await send('POST', { path: '/payment_methods/create', body: { type: 'card', card } })).answer.data;
    await run('POST /payment_methods/{id}/attach', {
      path: `/payment_methods/${other.id}/attach`,
      body: { customerId: customer.id },
    });
    await run('POST /payment_methods/{id}/update', {
      path: `/payment_methods/${other.id}/update`,
      body: { billingDetails: { phone: '+1 415 555 0100' } },
    });
    await run('POST /payment_methods/{id}/detach', { path: `/payment_methods/${other.id}/detach`, body: {} });

    const waiting = (
      await send('POST', { path: '/payment/create', body: { amount: '2500', currency: 'USD', orderNo: 'order-1002' } })
    ).answer.data;
    await run('POST /payment/{id}/update', {
      path: `/payment/${waiting.id}/update`,
      body: { description: 'Order 1002' },
    });
    await run('POST /payment/{id}', {
      path: `/payment/${waiting.id}`,
      body: { description: 'Order 1002, gift wrapped' },
    });
    const fresh = (await send('POST', { path: '/payment_methods/create', body: { type: 'card', card } })).answer.data;
    await run('POST /payment/{id}/confirm', {
      path: `/payment/${waiting.id}/confirm`,
      body: { paymentMethod: fresh.id },
    });
    const authorize = async (orderNo: string) => {
      const pm = (await send('POST', { path: '/payment_methods/create', body: { type: 'card', card } })).answer.data;
      const body = { amount: '1500', currency: 'USD', paymentMethod: pm.id, confirm: 'true', preAuth: 'y', orderNo };
      return (await send('POST', { path: '/payment/create', body })).answer.data;
    };
    await run('POST /payment/{id}/capture', {
      path: `/payment/${(await authorize('order-1003')).id}/capture`,
      body: {},
    });
    await run('POST /payment/{id}/cancel', {
      path: `/payment/${(await authorize('order-1004')).id}/cancel`,
      body: { cancellationReason: 'requested_by_customer' },
    });

    const refund = await run('POST /refunds/create', {
      path: '/refunds/create',
      body: { paymentId: payment.id, amount: '500', reason: 'requested_by_customer' },
    });
    await run('GET /refunds/{id}', { path: `/refunds/${refund.id}` });
    await run('GET /refunds', { path: '/refunds', query: { limit: '1' } });

    // docs/balances.md: funds available at once and a bank account (the operator's settings), so
    // that a payout can be made; then the daily schedule's payout settles what is available.
    const settings = await injectRaw(ctx, {
      method: 'POST',
      url: `/admin/v1/merchants/${merchant.id}/update`,
      headers: { authorization: `Bearer ${ctx.operatorKey}`, 'content-type': 'application/json' },
      payload: JSON.stringify({
        availabilityDays: 0,
        payoutSchedule: { interval: 'daily' },
        bankAccount: {
          holderName: 'Example Shop LLC',
          accountNumber: '000123456789',
          routingNumber: '110000000',
          currency: 'USD',
        },
      }),
    });
    assert.equal(settings.statusCode, 200, settings.body);
    const periodStart = ctx.clock.now().toISOString();
    const sold = (await send('POST', { path: '/payment_methods/create', body: { type: 'card', card } })).answer.data;
    const soldBody = {
      amount: '5000',
      currency: 'USD',
      paymentMethod: sold.id,
      confirm: 'true',
      orderNo: 'order-1006',
    };
    assert.equal((await send('POST', { path: '/payment/create', body: soldBody })).answer.data.status, 'succeeded');
    ctx.clock.advance(1000);
    await run('GET /balance', { path: '/balance' });
    const entries = await run('GET /balance_transactions', {
      path: '/balance_transactions',
      query: { type: 'payment', limit: '1' },
    });
    await run('GET /balance_transactions/{id}', { path: `/balance_transactions/${entries.data[0].id}` });
    await run('GET /balance/summary', {
      path: '/balance/summary',
      query: { from: periodStart, to: ctx.clock.now().toISOString() },
    });
    const payout = await run('POST /payouts/create', {
      path: '/payouts/create',
      body: { amount: '1000', currency: 'USD' },
    });
    await run('GET /payouts/{id}', { path: `/payouts/${payout.id}` });
    const second = (await send('POST', { path: '/payouts/create', body: { amount: '500', currency: 'USD' } })).answer
      .data;
    await run('POST /payouts/{id}/cancel', { path: `/payouts/${second.id}/cancel`, body: {} });
    ctx.clock.advance(60_000);
    await ctx.runJobs();
    const payouts = await run('GET /payouts', { path: '/payouts', query: { limit: '1' } });
    assert.equal(payouts.data[0].automatic, true, JSON.stringify(payouts));
    await run('GET /payouts/{id}/reconciliation', { path: `/payouts/${payouts.data[0].id}/reconciliation` });

    // docs/disputes.md, Sandbox: the fraudulent card's chargeback opens after the follow-up delay.
    const disputedMethod = (
      await send('POST', {
        path: '/payment_methods/create',
        body: { type: 'card', card: { ...card, cardNo: '4000000000000275' } },
      })
    ).answer.data;
    const disputed = (
      await send('POST', {
        path: '/payment/create',
        body: {
          amount: '4999',
          currency: 'USD',
          paymentMethod: disputedMethod.id,
          confirm: 'true',
          orderNo: 'order-2001',
        },
      })
    ).answer.data;
    ctx.clock.advance(3000);
    await ctx.runJobs();
    const disputes = await run('GET /disputes', { path: '/disputes', query: { paymentId: disputed.id, limit: '1' } });
    const dispute = disputes.data[0];
    await run('GET /disputes/{id}', { path: `/disputes/${dispute.id}` });
    await run('POST /disputes/{id}/update', {
      path: `/disputes/${dispute.id}/update`,
      body: {
        evidence: {
          productDescription: 'Walnut desk lamp, shipped 2026-11-20',
          shippingTrackingNumber: '1Z999AA10123456784',
        },
      },
    });
    await run('POST /disputes/{id}/accept', { path: `/disputes/${dispute.id}/accept`, body: {} });

    const lineItems = [{ description: 'Consulting, March', amount: '150000', quantity: 2 }];
    const invoiceBody = {
      customerId: customer.id,
      currency: 'USD',
      collectionMethod: 'send_invoice',
      daysUntilDue: 30,
      lineItems,
    };
    const invoice = await run('POST /invoices/create', { path: '/invoices/create', body: invoiceBody });
    await run('GET /invoices/{id}', { path: `/invoices/${invoice.id}` });
    await run('GET /invoices', { path: '/invoices', query: { limit: '1' } });
    await run('POST /invoices/{id}/update', {
      path: `/invoices/${invoice.id}/update`,
      body: { description: 'March work' },
    });
    await run('POST /invoices/{id}/finalize', { path: `/invoices/${invoice.id}/finalize`, body: {} });
    await run('POST /invoices/{id}/send', { path: `/invoices/${invoice.id}/send`, body: {} });
    await run('POST /invoices/{id}/void', { path: `/invoices/${invoice.id}/void`, body: {} });
    const draft = (await send('POST', { path: '/invoices/create', body: invoiceBody })).answer.data;
    await run('DELETE /invoices/{id}', { path: `/invoices/${draft.id}` });
    const newInvoice = async () => {
      const created = (await send('POST', { path: '/invoices/create', body: invoiceBody })).answer.data;
      return (await send('POST', { path: `/invoices/${created.id}/finalize` })).answer.data;
    };
    await run('POST /invoices/{id}/pay', {
      path: `/invoices/${(await newInvoice()).id}/pay`,
      body: { paymentMethod: method.id },
    });
    await run('POST /invoices/{id}/mark_uncollectible', {
      path: `/invoices/${(await newInvoice()).id}/mark_uncollectible`,
      body: {},
    });

    const session = await run('POST /checkout/session/create', {
      path: '/checkout/session/create',
      body: {
        amountTotal: '2598',
        currency: 'USD',
        orderNo: 10045,
        customerEmail: 'ada@example.com',
        lineItems: [{ name: 'T-shirt', amount: 12.99, currency: 'USD', quantity: 2 }],
        returnUrl: 'https://shop.example.com/checkout/done',
        cancelUrl: 'https://shop.example.com/cart',
      },
    });
    await run('GET /checkout/session/{id}', { path: `/checkout/session/${session.id}` });
    await run('GET /checkout/session', { path: '/checkout/session', query: { limit: '1' } });
    await run('POST /checkout/session/{id}/expire', { path: `/checkout/session/${session.id}/expire`, body: {} });

    const endpoint = await run('POST /webhook_endpoints/create', {
      path: '/webhook_endpoints/create',
      body: {
        url: receiver.url('/webhooks/tessera'),
        enabledEvents: ['payment.succeeded', 'payment.failed', 'refund.succeeded'],
        description: 'Order updates',
      },
    });
    await run('GET /webhook_endpoints/{id}', { path: `/webhook_endpoints/${endpoint.id}` });
    await run('GET /webhook_endpoints', { path: '/webhook_endpoints', query: { limit: '1' } });
    await run('POST /webhook_endpoints/{id}/update', {
      path: `/webhook_endpoints/${endpoint.id}/update`,
      body: { description: 'Orders' },
    });
    await run('GET /webhook_endpoints/{id}/reveal_token', { path: `/webhook_endpoints/${endpoint.id}/reveal_token` });
    await run('POST /webhook_endpoints/{id}/reveal_token', {
      path: `/webhook_endpoints/${endpoint.id}/reveal_token`,
      body: {},
    });
    // The grace period (docs/webhooks.md#standard-webhooks-format) is for Standard Webhooks endpoints: the old token signs beside the new one.
    const standard = (
      await send('POST', {
        path: '/webhook_endpoints/create',
        body: { url: receiver.url('/webhooks/standard'), format: 'standard', description: 'Standard Webhooks' },
      })
    ).answer.data;
    await run('POST /webhook_endpoints/{id}/roll_token', {
      path: `/webhook_endpoints/${standard.id}/roll_token`,
      body: { expiresInSeconds: 3600 },
    });
    await send('DELETE', { path: `/webhook_endpoints/${standard.id}` });
    await run('POST /webhook_endpoints/{id}/check', {
      path: `/webhook_endpoints/${endpoint.id}/check`,
      body: { url: receiver.url('/webhooks/tessera') },
    });
    await run('GET /webhook_endpoints/{id}/checks', { path: `/webhook_endpoints/${endpoint.id}/checks` });
    await run('POST /webhook_endpoints/{id}/recover', {
      path: `/webhook_endpoints/${endpoint.id}/recover`,
      body: { since: new Date(ctx.clock.now().getTime() - 3_600_000).toISOString() },
    });
    await run('GET /webhook_endpoints/sending_addresses', { path: '/webhook_endpoints/sending_addresses' });

    const events = await run('GET /events', { path: '/events', query: { objectId: payment.id, limit: '1' } });
    const event = events.data[0];
    await run('GET /events/{id}', { path: `/events/${event.id}` });
    await run('GET /events/{id}/deliveries', { path: `/events/${event.id}/deliveries` });
    await run('GET /events/{id}/attempts', { path: `/events/${event.id}/attempts` });
    const endpoints = (await send('GET', { path: '/webhook_endpoints', query: { limit: '100' } })).answer.data;
    const dynamic = endpoints.data.find((row: { kind: string }) => row.kind === 'dynamic');
    await run('POST /events/{id}/resend', { path: `/events/${event.id}/resend`, body: { endpointId: dynamic.id } });
    const deliveries = await run('GET /webhook_deliveries', { path: '/webhook_deliveries', query: { limit: '1' } });
    const delivery = deliveries.data[0];
    await run('GET /webhook_deliveries/{id}', { path: `/webhook_deliveries/${delivery.id}` });
    await run('GET /webhook_deliveries/{id}/attempts', { path: `/webhook_deliveries/${delivery.id}/attempts` });
    await run('POST /webhook_deliveries/{id}/resend', { path: `/webhook_deliveries/${delivery.id}/resend`, body: {} });
    await run('POST /webhook_deliveries/{id}/fast_forward', {
      path: `/webhook_deliveries/${delivery.id}/fast_forward`,
      body: { factor: 3600 },
    });
    await run('POST /webhooks/doctor', {
      path: '/webhooks/doctor',
      body: { headers: 'Request-Time: 2026-11-22T12:00:00\nSignature: 00', body: '{"id":"evt_1"}' },
    });
    await runStream(async () => {
      const pm = (await send('POST', { path: '/payment_methods/create', body: { type: 'card', card } })).answer.data;
      const body = { amount: '1999', currency: 'USD', paymentMethod: pm.id, confirm: 'true', orderNo: 'order-1005' };
      assert.equal((await send('POST', { path: '/payment/create', body })).answer.data.status, 'succeeded');
    });
    await run('DELETE /webhook_endpoints/{id}', { path: `/webhook_endpoints/${endpoint.id}` });
    await run('DELETE /customers/{id}', { path: `/customers/${customer.id}` });

    // Every operation of the merchant document has its example.
    const document = (await injectRaw(ctx, { method: 'GET', url: `${apiBase}/openapi.json` })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path.slice(apiBase.length)}`),
    );
    const missing = operations.filter((key) => !captured[key]);
    assert.deepEqual(missing, [], 'operations of the document without a captured example');

    if (update) {
      // Written as `npm run format` would write it.
      const { format, resolveConfig } = await import('prettier');
      const file = 'src/http/reference-examples.json';
      const options = { ...(await resolveConfig(file)), filepath: file };
      writeFileSync(file, await format(JSON.stringify(captured, null, 2), options));
      return;
    }
    const drifted = Object.keys(captured).filter(
      (key) =>
        !capturedExamples[key] ||
        JSON.stringify(shapeOf(capturedExamples[key]!.answer)) !== JSON.stringify(shapeOf(captured[key]!.answer)) ||
        JSON.stringify(shapeOf(capturedExamples[key]!.error.answer)) !==
          JSON.stringify(shapeOf(captured[key]!.error.answer)) ||
        capturedExamples[key]!.error.status !== captured[key]!.error.status,
    );
    assert.deepEqual(
      drifted,
      [],
      'answers whose shape differs from the reference example (npm run reference:capture rewrites them)',
    );
  });

  test("every published operation's @tessera/node sample calls a method of the SDK that sends that operation", async () => {
    // The SDK as merchants get it, built (npm run sdk:build; skipped when current, as after CI's
    // build) and imported by a computed path, so that typechecking the tests needs no generated types.
    execFileSync(process.execPath, ['scripts/sdk-build.mjs'], { stdio: 'inherit' });
    const sdk = (await import(pathToFileURL(path.resolve('sdk/dist/esm/index.js')).href)) as {
      Tessera: new (options: Record<string, unknown>) => object;
    };
    const sent: Array<{ method: string; url: URL; accept: string | null; body: unknown }> = [];
    const stream = ': connected\n\nid: evt_1\nevent: payment.succeeded\ndata: {"id":"evt_1","data":{"id":"pt_1"}}\n\n';
    const recordingFetch = async (url: URL, init: RequestInit = {}) => {
      const headers = new Headers(init.headers);
      const body = typeof init.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
      sent.push({ method: init.method ?? 'GET', url: new URL(url), accept: headers.get('accept'), body });
      return headers.get('accept') === 'text/event-stream'
        ? new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
        : Response.json({ code: 'success', msg: 'success', data: {} });
    };
    class RecordingTessera extends sdk.Tessera {
      constructor(options: Record<string, unknown>) {
        super({ ...options, fetch: recordingFetch, maxRetries: 0 });
      }
    }
    const AsyncFunction = (async () => {}).constructor as new (
      ...args: string[]
    ) => (...args: unknown[]) => Promise<void>;
    // The operations whose sample calls the SDK's method for another form of the same operation.
    const sentAs: Record<string, string> = {
      'POST /payment/{id}': 'POST /payment/{id}/update',
      'POST /webhook_endpoints/{id}/reveal_token': 'GET /webhook_endpoints/{id}/reveal_token',
    };

    // What /docs shows: the merchant document its page loads.
    const document = (await injectRaw(ctx, { method: 'GET', url: `${apiBase}/openapi.json` })).json() as {
      paths: Record<string, Record<string, { 'x-codeSamples'?: Array<{ label: string; source: string }> }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${path.slice(apiBase.length)}`,
        source: operation['x-codeSamples']?.find((sample) => sample.label === '@tessera/node')?.source ?? '',
      })),
    );
    assert.ok(operations.length > 50, `${operations.length} operations`);
    const templateOf = (method: string, path: string) =>
      operations
        .map(({ key }) => key.split(' ') as [string, string])
        .filter(([other, template]) => other === method && templatePattern(template).test(path))
        // A literal segment wins over a parameter: /webhook_endpoints/sending_addresses, not /{id}.
        .sort(([, a], [, b]) => (a.match(/\{/g) ?? []).length - (b.match(/\{/g) ?? []).length)[0]?.[1];

    const problems: string[] = [];
    for (const { key, source } of operations) {
      const named = /\btessera\.(\w+)\.(\w+)\(/.exec(source);
      if (!named || source.includes('tessera.request(')) {
        problems.push(`${key}: no named SDK method in ${JSON.stringify(source)}`);
        continue;
      }
      sent.length = 0;
      try {
        await new AsyncFunction('Tessera', 'process', 'console', source.replace(/^import .*$/m, ''))(
          RecordingTessera,
          { env: { TESSERA_API_KEY: 'test_pr_sample', TESSERA_URL: 'http://tessera.invalid' } },
          { log: () => undefined },
        );
      } catch (error) {
        problems.push(`${key}: tessera.${named[1]}.${named[2]}: ${(error as Error).message}`);
        continue;
      }
      if (sent.length !== 1) {
        problems.push(`${key}: sent ${sent.length} requests`);
        continue;
      }
      const request = sent[0]!;
      const example = capturedExamples[key]?.request ?? { path: key.slice(key.indexOf(' ') + 1) };
      const expected = sentAs[key] ?? key;
      const sentPath = request.url.pathname.slice(apiBase.length);
      const sentKey = `${request.method} ${templateOf(request.method, sentPath)}`;
      const ids = (template: string, path: string) => templatePattern(template).exec(path)?.slice(1);
      const got = {
        operation: sentKey,
        ids: ids(sentKey.split(' ')[1]!, sentPath),
        query: Object.fromEntries(request.url.searchParams),
        body: request.body,
        accept: request.accept,
      };
      const want = {
        operation: expected,
        ids: ids(key.split(' ')[1]!, example.path),
        query: example.query ?? {},
        body: request.method === 'POST' ? (example.body ?? {}) : undefined,
        accept: key === 'GET /events/stream' ? 'text/event-stream' : 'application/json',
      };
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        problems.push(
          `${key}: tessera.${named[1]}.${named[2]} sent ${JSON.stringify(got)}, not ${JSON.stringify(want)}`,
        );
      }
    }
    assert.deepEqual(problems, []);
  });
});
