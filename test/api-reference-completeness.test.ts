/**
 * docs/api.md#the-api-reference: the served reference shows every merchant operation with a request example (when the
 * operation takes a body, optional or not), a success example (JSON, or the event stream's text) and
 * at least one error example. The examples themselves are captured by
 * test/api-reference-examples.test.ts; this fails when one is missing from what /docs renders.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiBase, databaseKind, injectRaw, startTestApp, type TestContext } from './helpers/harness.js';

describe(`API reference completeness (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(() => ctx.close());

  test('the served reference shows, for every operation, a request example (when it takes a body), a success and an error', async () => {
    type Content = Record<string, { example?: unknown; schema?: unknown }>;
    type Operation = { requestBody?: { content?: Content }; responses?: Record<string, { content?: Content }> };
    const document = (await injectRaw(ctx, { method: 'GET', url: `${apiBase}/openapi.json` })).json() as {
      paths: Record<string, Record<string, Operation>>;
    };
    const hasExample = (content: Content | undefined) =>
      Object.values(content ?? {}).some((media) => media.example !== undefined);
    const lacking: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const key = `${method.toUpperCase()} ${path.slice(apiBase.length)}`;
        if (operation.requestBody && !hasExample(operation.requestBody.content)) lacking.push(`${key}: request`);
        if (!hasExample(operation.responses?.['200']?.content)) lacking.push(`${key}: success`);
        const errors = Object.entries(operation.responses ?? {}).filter(([status]) => Number(status) >= 400);
        if (!errors.some(([, answer]) => hasExample(answer.content))) lacking.push(`${key}: error`);
      }
    }
    assert.deepEqual(lacking, [], 'operations of the reference without an example');
  });
});
