import { envelope, ok } from '../../http/envelope.js';
import { merchantOf, type App } from '../../http/server.js';
import { errorResponseOf } from '../../http/error-responses.js';
import { WebhookEndpointParams } from '../endpoints/schemas.js';
import { RecoverBody, Recovery } from './schemas.js';
import type { RecoveryService } from './service.js';

// docs/dashboard.md#roles: like every webhook operation, for Owner, Administrator and Developer; the
// private key acts for them. Written to the audit log.
export function recoverRoutes(recovery: RecoveryService) {
  return (app: App) => {
    app.post(
      '/webhook_endpoints/:id/recover',
      {
        schema: {
          tags: ['Webhook endpoints'],
          description:
            'Sends the endpoint again, oldest first, every event created from since to until (both included) that it has not ' +
            'acknowledged (no delivery of it to this endpoint succeeded), including events made while it was ' +
            "disabled. One at a time, in the events' order: each delivery's first attempt starts once the attempt " +
            'of the one before it has been answered and recorded; one that fails is retried on its schedule while ' +
            'the rest go on. Deliveries still retrying take their places instead of being doubled. `since` in the future ' +
            'or older than retention: 400 naming it. A disabled endpoint: 409 endpoint_disabled (enable it ' +
            'first). Written to the audit log.',
          params: WebhookEndpointParams,
          body: RecoverBody,
          response: {
            200: envelope(Recovery),
            409: errorResponseOf('endpoint_disabled: the endpoint is disabled; enable it, then recover'),
          },
        },
      },
      async (request) =>
        ok(
          await recovery.recover(merchantOf(request), request.params.id, request.body, {
            traceId: request.id,
            clientAddress: request.ip,
          }),
        ),
    );
  };
}
