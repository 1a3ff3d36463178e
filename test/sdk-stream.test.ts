/**
 * The SDK's reader of server-sent events (`client.stream`, `events.stream`) on bodies made here:
 * how it splits lines and events, and how a stream ends (a `break`, an abort, a broken connection,
 * a refusal). The same methods against a started service: test/sdk-package.test.ts.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Frame {
  id: string | undefined;
  event: string | undefined;
  data: string;
}
interface Sent {
  url: URL;
  accept: string | null;
}
type Fetch = (url: URL, init: RequestInit) => Promise<Response>;
interface Client {
  stream(path: string, parts?: unknown, options?: { signal?: AbortSignal }): AsyncGenerator<Frame, void, undefined>;
  events: {
    stream(query?: unknown, options?: { signal?: AbortSignal }): AsyncGenerator<{ id: string; type: string }>;
  };
}
interface Sdk {
  Tessera: new (options: { apiKey: string; baseUrl: string; fetch: Fetch; maxRetries: number }) => Client;
}

/** A body that sends `chunks`, then closes, stays open (as between events) or breaks; it errors when `signal` aborts. */
function eventBody(chunks: string[], end: 'close' | 'open' | 'break', signal?: AbortSignal | null) {
  let canceled = false;
  const encoder = new TextEncoder();
  let sent = false;
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      signal?.addEventListener('abort', () => controller.error(signal.reason));
    },
    // Erroring a stream drops what it holds: a break comes on the pull after the chunks are read.
    pull(controller) {
      if (!sent) {
        sent = true;
        for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
        if (end === 'close') controller.close();
        return;
      }
      if (end === 'break') return controller.error(new Error('connection reset'));
      return new Promise<void>(() => undefined);
    },
    cancel() {
      canceled = true;
    },
  });
  return { stream, canceled: () => canceled };
}

describe("the SDK's reader of server-sent events", () => {
  let sdk: Sdk;
  before(async () => {
    // The SDK as built (skipped when current), by a computed path: typechecking needs no generated types.
    execFileSync(process.execPath, ['scripts/sdk-build.mjs'], { stdio: 'inherit' });
    sdk = (await import(pathToFileURL(path.resolve('sdk/dist/esm/index.js')).href)) as Sdk;
  });

  /** A client whose fetch answers `answer(signal)` and records what was asked. */
  function clientAnswering(answer: (signal: AbortSignal | null | undefined) => Response) {
    const sent: Sent[] = [];
    const fetch: Fetch = async (url, init) => {
      sent.push({ url: new URL(url), accept: new Headers(init.headers).get('accept') });
      return answer(init.signal);
    };
    const client = new sdk.Tessera({ apiKey: 'test_pr_x', baseUrl: 'http://tessera.invalid', fetch, maxRetries: 0 });
    return { client, sent };
  }
  const eventStream = (body: ReadableStream<Uint8Array>) =>
    new Response(body, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } });

  test('splits events on LF, CRLF and CR, also across chunks, joins data lines, skips comments, drops an unfinished last event', async () => {
    const chunks = [
      ': connected\n\n',
      'id: evt_1\nevent: payment.succeeded\ndata: {"a":',
      '1,\r',
      '\ndata: "b":2}\r\n\r\n: keep-alive\n\nid: evt_2\rdata: line one\rdata:line two\r\r',
      'data: unfinished',
    ];
    const { client, sent } = clientAnswering(() => eventStream(eventBody(chunks, 'close').stream));
    const frames: Frame[] = [];
    for await (const frame of client.stream('/events/stream', { query: { types: 'payment.succeeded' } })) {
      frames.push(frame);
    }
    assert.deepEqual(frames, [
      { id: 'evt_1', event: 'payment.succeeded', data: '{"a":1,\n"b":2}' },
      { id: 'evt_2', event: undefined, data: 'line one\nline two' },
    ]);
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.url.href, 'http://tessera.invalid/api/services/v1/events/stream?types=payment.succeeded');
    assert.equal(sent[0]!.accept, 'text/event-stream');
  });

  test('events.stream yields each data line as an event; leaving the loop cancels the body', async () => {
    const event = { id: 'evt_1', type: 'endpoint_payment.payment_succeeded' };
    const body = eventBody([`: connected\n\nid: evt_1\ndata: ${JSON.stringify(event)}\n\n`], 'open');
    const { client } = clientAnswering(() => eventStream(body.stream));
    const seen: unknown[] = [];
    for await (const streamed of client.events.stream()) {
      seen.push(streamed);
      break;
    }
    assert.deepEqual(seen, [event]);
    assert.equal(body.canceled(), true, 'the connection is closed');
  });

  test('aborting the signal ends the loop without an error, while it waits and before it starts', async () => {
    const stop = new AbortController();
    const { client } = clientAnswering((signal) =>
      eventStream(eventBody(['id: evt_1\ndata: {}\n\n'], 'open', signal).stream),
    );
    const events = client.events.stream({}, { signal: stop.signal });
    assert.deepEqual(await events.next(), { done: false, value: {} });
    const waiting = events.next();
    stop.abort();
    assert.deepEqual(await waiting, { done: true, value: undefined });
    const { client: other, sent } = clientAnswering(() => assert.fail('no request after an abort'));
    assert.deepEqual(await other.events.stream({}, { signal: stop.signal }).next(), { done: true, value: undefined });
    assert.equal(sent.length, 0);
  });

  test('a stream that breaks throws TesseraConnectionError; a refusal, TesseraError; a 200 that is no event stream, invalid_response', async () => {
    const broken = clientAnswering(() => eventStream(eventBody(['data: {}\n\n'], 'break').stream)).client;
    const seen: unknown[] = [];
    await assert.rejects(
      (async () => {
        for await (const event of broken.events.stream()) seen.push(event);
      })(),
      { name: 'TesseraConnectionError', code: 'connection_error', status: 0 },
    );
    assert.deepEqual(seen, [{}], 'the events before the break');

    const envelope = {
      code: 'invalid_request',
      msg: "types must be event codes separated by commas; 'payment.succeded' is not one",
      data: { param: 'types' },
    };
    const refused = clientAnswering(() => Response.json(envelope, { status: 400 })).client;
    await assert.rejects(refused.events.stream({ types: 'payment.succeded' }).next(), {
      name: 'TesseraError',
      code: 'invalid_request',
      status: 400,
      param: 'types',
    });

    const json = clientAnswering(() => Response.json({ code: 'success', msg: 'success', data: {} })).client;
    await assert.rejects(json.events.stream().next(), { name: 'TesseraError', code: 'invalid_response', status: 200 });

    const notJson = clientAnswering(() =>
      eventStream(eventBody(['id: evt_1\ndata: {oops\n\n'], 'close').stream),
    ).client;
    await assert.rejects(notJson.events.stream().next(), { code: 'invalid_response' });
  });
});
