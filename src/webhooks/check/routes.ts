import { envelope, listOf, ok } from '../../http/envelope.js';
import { merchantOf, type App } from '../../http/server.js';
import { ListChecksQuery, RunCheckBody, WebhookCheck } from './schemas.js';
import type { WebhookCheckService } from './service.js';
import type { WebhookDoctor } from './doctor.js';
import { DoctorBody, DoctorReport } from './doctor-schemas.js';
import { WebhookEndpointParams } from '../endpoints/schemas.js';

const tags = ['Webhook endpoints'];

// Like the rest of webhooks (docs/dashboard.md#roles): the private key only, a public key is refused before these run.
export function webhookCheckRoutes(checks: WebhookCheckService, doctor: WebhookDoctor) {
  return (app: App) => {
    app.post(
      '/webhook_endpoints/:id/check',
      {
        // A body is optional: no body checks the endpoint's own url.
        preValidation: async (request) => {
          if (request.body === undefined || request.body === null) request.body = {};
        },
        schema: {
          tags,
          description:
            "The go-live check: sends test deliveries to the endpoint's url (or `url`; required for the dynamic " +
            "endpoint), signed with the endpoint's token and signatureCase and sent with the real headers, and " +
            'judges each answer. `valid` and `duplicate` must be answered 2xx `success`; `bad_signature`, ' +
            '`stale_request_time` and `future_request_time` (Request-Time 4 minutes off), `changed_body` and ' +
            '`legacy_kind` must not; every answer must come within the delivery timeout. Test bodies carry ' +
            '`"test": true` and ids of the form `chk_…` that name nothing stored. The result is stored: see ' +
            '`GET /webhook_endpoints/{id}/checks`.',
          params: WebhookEndpointParams,
          body: RunCheckBody,
          response: { 200: envelope(WebhookCheck) },
        },
      },
      async (request) => ok(await checks.run(merchantOf(request), request.params.id, request.body)),
    );
    app.get(
      '/webhook_endpoints/:id/checks',
      {
        schema: {
          tags,
          description: 'The go-live checks of the endpoint, newest first, with their cases and verdicts.',
          params: WebhookEndpointParams,
          querystring: ListChecksQuery,
          response: { 200: listOf(WebhookCheck) },
        },
      },
      async (request) => ok(await checks.list(merchantOf(request), request.params.id, request.query)),
    );
    app.post(
      '/webhooks/doctor',
      {
        schema: {
          tags,
          description:
            'The verification doctor: give a notification as your receiver got it (headers as an object or raw ' +
            'text, the raw body, optionally the token you verify with and the endpoint id) and it says why the ' +
            'signature does not verify: a header missing, Request-Time more than 3 minutes off, the body changed ' +
            "after receipt (with the first differing position, compared with the stored event when the body's id " +
            "is one of yours), a wrong token (another endpoint's, or the legacy key: the legacy kind), or the hex " +
            'case; or that it verifies. No secret is ever echoed; previous tokens are not kept, so a rolled token ' +
            'cannot be recognised.',
          body: DoctorBody,
          response: { 200: envelope(DoctorReport) },
        },
      },
      async (request) => ok(await doctor.diagnose(merchantOf(request), request.body)),
    );
  };
}
