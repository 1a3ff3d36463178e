/**
 * Requests that are malformed below the JSON level (HTTP framing, body encodings, character sets)
 * are refused in the docs/api.md#responses envelope, naming the rule, never misread or answered in another shape.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { apiBase, injectRaw, startTestApp, type TestContext, type TestMerchant } from './helpers/harness.js';

/** Sends raw bytes to the listener and reads the answer until the server closes the connection. */
function rawExchange(port: number, request: string | Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (err) => (chunks.length > 0 ? resolve(Buffer.concat(chunks).toString()) : reject(err)));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.write(request);
  });
}

function parseAnswer(text: string): { status: number; headers: string; body: any } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head, body: JSON.parse(body) };
}

describe('malformed HTTP on a real listener', () => {
  let ctx: TestContext;
  let port: number;
  before(async () => {
    ctx = await startTestApp();
    await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
    port = (ctx.tessera.server.server.address() as AddressInfo).port;
  });
  after(() => ctx.close());

  test('headers larger than the limit get 431 in the envelope, with an X-TraceId', async () => {
    const answer = parseAnswer(
      await rawExchange(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    assert.equal(answer.status, 431);
    assert.match(answer.headers, /^X-TraceId: [0-9a-f]{24}$/im);
    assert.equal(answer.body.code, 'invalid_request');
    assert.equal(answer.body.data.param, 'headers');
    assert.match(answer.body.msg, /headers together are larger than 16 KiB/);
  });

  test('a request that is not HTTP gets 400 in the envelope', async () => {
    const answer = parseAnswer(await rawExchange(port, 'NOT HTTP AT ALL\r\n\r\n'));
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, 'invalid_request');
    assert.equal(answer.body.data.param, 'request');
  });
});

describe('request bodies in another encoding or character set', () => {
  let ctx: TestContext;
  let merchant: TestMerchant;
  before(async () => {
    ctx = await startTestApp();
    merchant = await ctx.merchant();
  });
  after(() => ctx.close());

  async function post(payload: Buffer, headers: Record<string, string>) {
    const response = await injectRaw(ctx, {
      method: 'POST',
      url: `${apiBase}/customers/create`,
      headers: { authorization: `Bearer ${merchant.privateKey}`, ...headers },
      payload,
    });
    return { status: response.statusCode, body: JSON.parse(response.body) };
  }

  async function customerCount(): Promise<number> {
    return (await merchant.call('GET', '/customers?limit=100')).body.data.data.length;
  }

  test('a compressed body is refused naming Content-Encoding, whatever it holds', async () => {
    const json = Buffer.from(JSON.stringify({ email: 'gz@example.com' }));
    for (const [encoding, payload] of [
      ['gzip', gzipSync(json)],
      ['gzip', json],
      ['br', json],
    ] as const) {
      const answer = await post(payload, { 'content-type': 'application/json', 'content-encoding': encoding });
      assert.equal(answer.status, 400, encoding);
      assert.equal(answer.body.code, 'invalid_request');
      assert.equal(answer.body.data.param, 'Content-Encoding');
      assert.match(answer.body.msg, /Content-Encoding is not supported/);
    }
    const form = await post(Buffer.from('email=f%40example.com'), {
      'content-type': 'application/x-www-form-urlencoded',
      'content-encoding': 'deflate',
    });
    assert.equal(form.body.data.param, 'Content-Encoding');
    assert.equal(await customerCount(), 0);
    const identity = await post(json, { 'content-type': 'application/json', 'content-encoding': 'identity' });
    assert.equal(identity.status, 200);
  });

  test('a charset other than UTF-8 is refused naming Content-Type', async () => {
    const text = JSON.stringify({ email: 'u16@example.com', firstName: 'Zoë' });
    for (const [charset, payload] of [
      ['utf-16', Buffer.from(`\ufeff${text}`, 'utf16le')],
      ['utf-16le', Buffer.from(text, 'utf16le')],
      ['iso-8859-1', Buffer.from(text, 'latin1')],
    ] as const) {
      const answer = await post(payload, { 'content-type': `application/json; charset=${charset}` });
      assert.equal(answer.status, 400, charset);
      assert.equal(answer.body.data.param, 'Content-Type');
      assert.match(answer.body.msg, /charset must be utf-8/);
    }
    const utf8 = await post(Buffer.from(text), { 'content-type': 'application/json; charset="UTF-8"' });
    assert.equal(utf8.status, 200);
    assert.equal(utf8.body.data.firstName, 'Zoë');
  });

  test('invalid UTF-8 is refused naming the body, never stored with replacement characters', async () => {
    const before = await customerCount();
    const payload = Buffer.concat([
      Buffer.from('{"email":"bad@example.com","firstName":"Zo'),
      Buffer.from([0xeb, 0xff]),
      Buffer.from('"}'),
    ]);
    const answer = await post(payload, { 'content-type': 'application/json' });
    assert.equal(answer.status, 400);
    assert.equal(answer.body.code, 'invalid_request');
    assert.equal(answer.body.data.param, 'body');
    assert.match(answer.body.msg, /not valid UTF-8/);
    assert.equal(await customerCount(), before);
  });
});
