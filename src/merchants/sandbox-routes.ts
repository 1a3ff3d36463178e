import { Type } from 'typebox';
import { DomainError } from '../core/errors.js';
import { envelope, ok } from '../http/envelope.js';
import type { App } from '../http/server.js';
import type { Db } from '../db/db.js';
import { sandboxMerchantId } from './sandbox.js';

const tags = ['Operator'];
const security = [{ operatorKey: [] }];

const DashboardLink = Type.Object({
  merchantId: Type.String({ description: 'The sandbox merchant' }),
  url: Type.String({ description: "A one-time sign-in link to the dashboard as the sandbox merchant's Owner (72 h)" }),
});

/**
 * Development only (not registered in production): a fresh one-time dashboard sign-in link for the
 * sandbox merchant's Owner, as `tessera start` prints one, for `tessera dashboard-link` — a used
 * link no longer leaves a newcomer with a restart as the only way back in
 * (docs/decisions/0049-first-hour.md).
 */
export function sandboxRoutes(db: Db, ownerLink: (merchantId: string) => Promise<string>) {
  return (app: App) => {
    app.post(
      '/sandbox/dashboard_link',
      { schema: { tags, security, response: { 200: envelope(DashboardLink) } } },
      async (_request, reply) => {
        const merchantId = await sandboxMerchantId(db);
        if (!merchantId) {
          throw new DomainError(
            'resource_missing',
            'No sandbox merchant yet: `tessera start` makes it on its first start',
          );
        }
        void reply.header('cache-control', 'no-store');
        return ok({ merchantId, url: await ownerLink(merchantId) });
      },
    );
  };
}
