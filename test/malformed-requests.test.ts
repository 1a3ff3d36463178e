/**
 * Requests that are malformed below the JSON level (HTTP framing, body encodings, character sets)
 * are refused in the SPEC §7 envelope, naming the rule, never misread or answered in another shape.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestContext } from './helpers/harness.js';

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
