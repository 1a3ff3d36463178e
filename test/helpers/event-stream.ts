import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { apiBase, type TestContext } from './harness.js';

/** Polls `check` every 50 ms until it holds; fails naming `what` after `timeoutMs`. */
export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** GET /events/stream over HTTP, read as it comes: answers once `: connected` arrived. */
export async function openStream(ctx: TestContext, key: string) {
  if (!ctx.tessera.server.server.listening) await ctx.tessera.server.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.tessera.server.server.address() as AddressInfo;
  const abort = new AbortController();
  const response = await fetch(`http://127.0.0.1:${port}${apiBase}/events/stream`, {
    headers: { authorization: `Bearer ${key}` },
    signal: abort.signal,
  });
  assert.equal(response.status, 200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  void (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
    }
  })().catch(() => {});
  await waitUntil(() => text.includes(': connected'), 10_000, 'the stream to connect');
  return { text: () => text, close: () => abort.abort() };
}
