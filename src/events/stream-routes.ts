import type { FastifyReply } from 'fastify';
import { Type, type Static } from 'typebox';
import { invalidField } from '../core/errors.js';
import { merchantOf, type App } from '../http/server.js';
import { endpointBodyOf } from './endpoint-body.js';
import { resolveEventCode, unknownEventCodeHint } from './event-types.js';
import type { EventFeed, StreamedEvent } from './feed.js';

/**
 * `GET /events/stream` (issue 12, `tessera listen`): the merchant's events as server-sent events,
 * each one as it is recorded by any process (feed.ts: LISTEN/NOTIFY), so that a developer's machine can receive them without being
 * reachable from the service. Each event's `data` is the body a real endpoint delivery sends
 * (docs/webhooks.md#what-is-sent endpoint kind, canonical JSON on one line), for the CLI to sign and forward as is.
 */
export const EventStreamQuery = Type.Object(
  {
    types: Type.Optional(
      Type.String({
        maxLength: 2000,
        description:
          'Only these event codes, separated by commas (docs/webhooks.md#event-codes; either name of a code, any letter case). Default: every event.',
        example: 'payment.succeeded,payment.failed',
      }),
    ),
  },
  { additionalProperties: false },
);
type EventStreamQuery = Static<typeof EventStreamQuery>;

/** A comment line often enough that proxies and load balancers keep an idle stream open. */
const keepAliveMs = 15_000;

function parseTypes(raw: string | undefined): Set<string> | null {
  if (raw === undefined || raw.trim() === '') return null;
  const types = new Set<string>();
  // docs/webhooks.md#endpoints-and-tokens: either name of a code, in any letter case.
  for (const name of raw.split(',').map((type) => type.trim())) {
    const code = resolveEventCode(name);
    if (code === undefined) {
      throw invalidField(
        'types',
        `types must be event codes separated by commas; '${name.slice(0, 64)}' is not one: ${unknownEventCodeHint(name)}`,
        'event_type',
      );
    }
    types.add(code);
  }
  return types;
}

/** One server-sent event: `id`, `event` (the event code) and the delivery body as `data`. */
function frame(event: StreamedEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${endpointBodyOf(event.body, event.type)}\n\n`;
}

export function eventStreamRoutes(feed: EventFeed) {
  return (app: App) => {
    const open = new Set<FastifyReply>();
    // Open streams would keep the server from closing: they end first, and the CLI reconnects.
    app.addHook('preClose', async () => {
      for (const reply of open) reply.raw.end();
    });

    app.get(
      '/events/stream',
      {
        schema: {
          tags: ['Events'],
          summary: 'Stream events as they happen (server-sent events)',
          description:
            'Keeps the connection open and sends each event of the key’s merchant and mode (test or live) as it ' +
            'is recorded by any process of the service (behind a balancer, every process’s events), as a ' +
            'server-sent event: `id` the event id, `event` the event code, `data` the body a ' +
            'webhook endpoint receives (`type` in its `endpoint_` form). A comment line `: keep-alive` comes ' +
            'every 15 seconds. Used by `tessera listen`; events recorded while no stream is open are not replayed ' +
            '(read them with GET /events).',
          querystring: EventStreamQuery,
          response: {
            200: {
              description: 'A text/event-stream that stays open',
              // Its example is captured from a real run (src/http/reference-examples.json).
              content: { 'text/event-stream': { schema: { type: 'string' } } },
            },
          },
        },
      },
      async (request, reply) => {
        const merchant = merchantOf(request);
        const types = parseTypes((request.query as EventStreamQuery).types);
        let ended = false;
        // Listening first, so that an event recorded after `: connected` is seen; until the headers
        // are written the frames wait. Without the database this answers 503 like any request.
        const waiting: string[] = [];
        let write = (text: string) => void waiting.push(text);
        const stop = await feed.subscribe(merchant.merchantId, merchant.mode, (recorded) => {
          for (const event of recorded) {
            if (types && !types.has(event.type)) continue;
            write(frame(event));
          }
        });
        // The stream's own Cache-Control below, not the API's no-store (src/http/server.ts), sent once.
        reply.removeHeader('cache-control');
        reply.hijack();
        const response = reply.raw;
        response.writeHead(200, {
          ...(reply.getHeaders() as Record<string, string>),
          'Content-Type': 'text/event-stream; charset=utf-8',
          'Cache-Control': 'no-cache',
          'X-Accel-Buffering': 'no',
        });
        response.write(`: connected\n\n${waiting.join('')}`);
        write = (text) => void response.write(text);
        const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), keepAliveMs);
        open.add(reply);
        const end = () => {
          if (ended) return;
          ended = true;
          stop();
          clearInterval(keepAlive);
          open.delete(reply);
        };
        // The response closes when the client goes away (or the server ends it): nothing is left behind.
        response.once('close', end);
        if (response.destroyed) end();
      },
    );
  };
}
