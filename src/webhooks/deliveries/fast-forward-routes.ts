import { envelope, ok } from '../../http/envelope.js';
import { merchantOf, type App } from '../../http/server.js';
import { FastForwardBody, type FastForward } from './fast-forward.js';
import { DeliveryParams, WebhookDelivery } from './schemas.js';

/** POST /webhook_deliveries/:id/fast_forward: test mode's compressed retry schedule (fast-forward.ts). */
export function fastForwardRoutes(service: FastForward) {
  return (app: App) => {
    app.post(
      '/webhook_deliveries/:id/fast_forward',
      {
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
        schema: {
          tags: ['Webhook deliveries'],
          description:
            "Test mode only (live: 403 permission_denied, rule test_mode_only): runs the pending delivery's " +
            'remaining retry schedule compressed, each wait divided by `factor` (default 3600, 1 to 86400), so ' +
            'that all 13 attempts and the give-up can be watched (GET /webhook_deliveries/{id}/attempts). The ' +
            'next attempt falls due at once, except for a recovered delivery still waiting for the one before it ' +
            '(nextAttemptAt null): it keeps its place, and its later waits are divided. A delivery that succeeded ' +
            'or was given up: invalid_state.',
          params: DeliveryParams,
          body: FastForwardBody,
          response: { 200: envelope(WebhookDelivery) },
        },
      },
      async (request) => ok(await service.fastForward(merchantOf(request), request.params.id, request.body)),
    );
  };
}
