import { Type } from 'typebox';
import type { Queryable } from '../db/db.js';
import { envelope, ok } from '../http/envelope.js';
import type { App } from '../http/server.js';
import { findCardNumbersInFreeText } from './service.js';

const tags = ['Operator'];
const security = [{ operatorKey: [] }];

const CardNumberFinding = Type.Object({
  merchantId: Type.String({ examples: ['mer_7301542996317045834'] }),
  mode: Type.String({ examples: ['test'] }),
  object: Type.String({
    description:
      'The kind of object: payment, customer, refund, invoice, checkout_session, payment_method, webhook_endpoint',
  }),
  id: Type.String({ examples: ['pt_7301542996317045834'] }),
  field: Type.String({ description: "The field in the API's words", examples: ['lineItems[0].name'] }),
  masked: Type.String({
    description: 'The stored text with each card number shown as its last four digits (at most 200 characters)',
    examples: ['Card •••• 4242'],
  }),
});

/** The operator API's audits of stored data (docs/security.md). */
export function auditRoutes(db: Queryable) {
  return (app: App) => {
    app.get(
      '/audit/card_numbers',
      {
        schema: {
          tags,
          security,
          description:
            'Every stored free-text value (descriptions, names, addresses, line items, notes, metadata) that holds a card number, masked to its last four digits, by merchant: rows written before such values were refused (docs/decisions/0045-card-numbers-in-free-text.md). At most 1000 rows of each kind of object; `truncated` says when there were more.',
          response: {
            200: envelope(Type.Object({ data: Type.Array(CardNumberFinding), truncated: Type.Boolean() })),
          },
        },
      },
      async () => ok(await findCardNumbersInFreeText(db)),
    );
  };
}
