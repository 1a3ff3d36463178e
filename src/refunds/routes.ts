import type { FastifyRequest } from 'fastify';
import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import { CreateRefundBody, ListRefundsQuery, Refund, RefundParams } from './schemas.js';
import type { RefundService } from './service.js';

const tags = ['Refunds'];

/**
 * docs/api.md#responses, docs/api.md#compatibility-with-existing-clients: existing clients send `""` for an optional id, enum or number they leave unset,
 * which means absent (free text such as `note` and `description` keeps `""`).
 */
function emptyMeansAbsent(part: 'body' | 'query', fields: readonly string[]) {
  return async (request: FastifyRequest): Promise<void> => {
    const values = request[part] as Record<string, unknown> | undefined;
    if (values === null || typeof values !== 'object' || Array.isArray(values)) return;
    for (const field of fields) if (values[field] === '') delete values[field];
  };
}

export function refundRoutes(refunds: RefundService) {
  return (app: App) => {
    app.post(
      '/refunds/create',
      {
        preValidation: emptyMeansAbsent('body', ['amount', 'currency', 'reason']),
        schema: {
          tags,
          description:
            'Refunds a payment with money received (status `succeeded`), in full or in part. The refund is `pending` until the processor settles it; pending and succeeded refunds together never exceed `amountReceived` (`amount_too_large`, with what is left in `data.amountRefundable`).',
          body: CreateRefundBody,
          response: { 200: envelope(Refund) },
        },
      },
      async (request) => ok(await refunds.create(merchantOf(request), request.body)),
    );
    app.get(
      '/refunds/:id',
      {
        schema: { tags, description: 'A refund by its id.', params: RefundParams, response: { 200: envelope(Refund) } },
      },
      async (request) => ok(await refunds.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/refunds',
      {
        preValidation: emptyMeansAbsent('query', ['paymentId', 'status']),
        schema: {
          tags,
          description: 'Newest first. Filters: paymentId, status, created[gt|gte|lt|lte] (ISO 8601).',
          querystring: ListRefundsQuery,
          response: { 200: listOf(Refund) },
        },
      },
      async (request) => ok(await refunds.list(merchantOf(request), request.query)),
    );
  };
}
