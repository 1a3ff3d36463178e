/**
 * The route schemas' compilers (src/http/lazy-compilers.ts, src/http/validation.ts), plugged into
 * Fastify as buildServer plugs them: what one server compiled, another server of the same process
 * with the same schema uses (the tests build many servers per process), and a different schema
 * never gets another's serializer or validator.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { lazySerializerFactory } from '../src/http/lazy-compilers.js';
import { validatorCompiler } from '../src/http/validation.js';

interface Seen {
  serializer: unknown;
  validator: unknown;
  body: unknown;
}

/** A server with one route answering `{ id, note, extra }`, its schemas made fresh (new objects). */
async function serve(options: { withExtra: boolean; noteMaxLength: number }): Promise<Seen> {
  const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } } });
  app.setValidatorCompiler(validatorCompiler);
  const properties: Record<string, unknown> = {
    id: { type: 'string' },
    note: { anyOf: [{ type: 'string' }, { type: 'null' }] },
  };
  if (options.withExtra) properties.extra = { type: 'integer' };
  let seen: Omit<Seen, 'body'> | undefined;
  app.post(
    '/things',
    {
      schema: {
        body: {
          type: 'object',
          required: ['note'],
          properties: { note: { type: 'string', maxLength: options.noteMaxLength } },
          additionalProperties: false,
        },
        response: { 200: { type: 'object', properties } },
      },
    },
    async (request, reply) => {
      seen = { serializer: reply.getSerializationFunction('200'), validator: request.getValidationFunction('body') };
      return { id: 'thing_1', note: (request.body as { note: string }).note, extra: 7, secret: 'never sent' };
    },
  );
  try {
    const answer = await app.inject({ method: 'POST', url: '/things', payload: { note: 'hello' } });
    assert.equal(answer.statusCode, 200, answer.body);
    const refused = await app.inject({ method: 'POST', url: '/things', payload: { note: 'x'.repeat(9) } });
    assert.equal(refused.statusCode === 200, options.noteMaxLength >= 9, refused.body);
    assert.ok(seen);
    return { ...seen, body: answer.json() };
  } finally {
    await app.close();
  }
}

test('two servers with the same schemas share the compiled serializer and validator', async () => {
  const first = await serve({ withExtra: false, noteMaxLength: 5 });
  const second = await serve({ withExtra: false, noteMaxLength: 5 });
  assert.equal(typeof first.serializer, 'function');
  assert.equal(first.serializer, second.serializer);
  assert.equal(typeof first.validator, 'function');
  assert.equal(first.validator, second.validator);
  assert.deepEqual(second.body, { id: 'thing_1', note: 'hello' });
});

test('a server with different schemas gets its own serializer and validator, and answers by its own', async () => {
  const plain = await serve({ withExtra: false, noteMaxLength: 5 });
  const wider = await serve({ withExtra: true, noteMaxLength: 20 });
  assert.notEqual(plain.serializer, wider.serializer);
  assert.notEqual(plain.validator, wider.validator);
  assert.deepEqual(plain.body, { id: 'thing_1', note: 'hello' });
  assert.deepEqual(wider.body, { id: 'thing_1', note: 'hello', extra: 7 });
});
