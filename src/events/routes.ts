import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import { Event, EventParams, ListEventsQuery } from './schemas.js';
import type { EventService } from './service.js';

const tags = ['Events'];

export function eventRoutes(events: EventService) {
  return (app: App) => {
    app.get(
      '/events/:id',
      { schema: { tags, params: EventParams, response: { 200: envelope(Event) } } },
      async (request) => ok(await events.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/events',
      { schema: { tags, querystring: ListEventsQuery, response: { 200: listOf(Event) } } },
      async (request) => ok(await events.list(merchantOf(request), request.query)),
    );
  };
}
