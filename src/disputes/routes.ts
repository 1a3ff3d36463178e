import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import { Dispute, DisputeParams, ListDisputesQuery, UpdateDisputeBody } from './schemas.js';
import type { DisputeService } from './service.js';

const tags = ['Disputes'];

export function disputeRoutes(disputes: DisputeService) {
  return (app: App) => {
    app.get(
      '/disputes',
      {
        schema: {
          tags,
          description: 'Newest first. Filters: paymentId, status, created[gt|gte|lt|lte] (ISO 8601).',
          querystring: ListDisputesQuery,
          response: { 200: listOf(Dispute) },
        },
      },
      async (request) => ok(await disputes.list(merchantOf(request), request.query)),
    );
    app.get(
      '/disputes/:id',
      {
        schema: {
          tags,
          description: 'A dispute by its id.',
          params: DisputeParams,
          response: { 200: envelope(Dispute) },
        },
      },
      async (request) => ok(await disputes.retrieve(merchantOf(request), request.params.id)),
    );
    app.post(
      '/disputes/:id/update',
      {
        schema: {
          tags,
          description:
            'Stages evidence (text fields, and file ids from POST /files); `submit: true` sends it. 409 `dispute_not_open` after `dueBy` or once the dispute is under review or closed; the text fields hold at most 150,000 characters in all. The submission of a live dispute is sent to its processor; 503 `processor_error` when the processor fails, and the same request sends it again.',
          params: DisputeParams,
          body: UpdateDisputeBody,
          response: { 200: envelope(Dispute) },
        },
      },
      async (request) =>
        ok(await disputes.update(merchantOf(request), request.params.id, request.body as UpdateDisputeBody)),
    );
    app.post(
      '/disputes/:id/accept',
      {
        schema: {
          tags,
          description:
            'Gives the dispute up: a chargeback is `accepted` (its money stays withdrawn), an inquiry `warning_closed`. A live dispute is accepted at its processor first; 503 `processor_error` when the processor fails, and the same request sends it again.',
          params: DisputeParams,
          response: { 200: envelope(Dispute) },
        },
      },
      async (request) => ok(await disputes.accept(merchantOf(request), request.params.id)),
    );
  };
}
