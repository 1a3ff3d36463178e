import { Type } from 'typebox';
import { envelope, ok } from '../http/envelope.js';
import type { App } from '../http/server.js';
import { MerchantParams } from '../merchants/schemas.js';
import {
  CreateProcessorAccountBody,
  ProcessorAccount,
  ProcessorAccountParams,
  UpdateProcessorAccountBody,
} from './schemas.js';
import type { NotificationReceiver } from './notifications.js';
import type { ProcessorAccountService } from './service.js';

const tags = ['Operator'];
const security = [{ operatorKey: [] }];

/** The operator API's processor accounts (docs/processors.md): connect, list, change, disable. */
export function processorAccountRoutes(accounts: ProcessorAccountService) {
  return (app: App) => {
    app.post(
      '/merchants/:id/processor_accounts/create',
      {
        schema: {
          tags,
          security,
          params: MerchantParams,
          body: CreateProcessorAccountBody,
          response: { 200: envelope(ProcessorAccount) },
        },
      },
      async (request, reply) => {
        void reply.header('cache-control', 'no-store');
        return ok(await accounts.create(request.params.id, request.body));
      },
    );
    app.get(
      '/merchants/:id/processor_accounts',
      {
        schema: {
          tags,
          security,
          params: MerchantParams,
          response: { 200: envelope(Type.Object({ data: Type.Array(ProcessorAccount), hasMore: Type.Boolean() })) },
        },
      },
      async (request) => ok({ data: await accounts.list(request.params.id), hasMore: false }),
    );
    app.post(
      '/processor_accounts/:id/update',
      {
        schema: {
          tags,
          security,
          params: ProcessorAccountParams,
          body: UpdateProcessorAccountBody,
          response: { 200: envelope(ProcessorAccount) },
        },
      },
      async (request, reply) => {
        void reply.header('cache-control', 'no-store');
        return ok(await accounts.update(request.params.id, request.body));
      },
    );
  };
}

/**
 * Where processors send their notifications (the account's webhookUrl), outside the APIs: the
 * connector verifies the body's signature, so the body is read as the exact text that was sent.
 */
export function processorWebhookRoutes(receiver: NotificationReceiver) {
  return (app: App) => {
    app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: 1024 * 1024 }, (_request, body, done) =>
        done(null, body),
      );
      scope.post('/processor_webhooks/:accountId', { schema: { hide: true } }, async (request, reply) => {
        const { accountId } = request.params as { accountId: string };
        const headers: Record<string, string | undefined> = {};
        for (const [name, value] of Object.entries(request.headers)) {
          headers[name] = Array.isArray(value) ? value.join(', ') : value;
        }
        const rawBody = typeof request.body === 'string' ? request.body : '';
        const answer = await receiver.receive(accountId, headers, rawBody);
        return reply.code(answer.status).header('content-type', answer.contentType).send(answer.body);
      });
    });
  };
}
