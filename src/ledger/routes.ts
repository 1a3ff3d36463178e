import { Type } from 'typebox';
import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import { createdBounds } from '../core/common-schemas.js';
import {
  Balance,
  BalanceSummary,
  BalanceSummaryQuery,
  BalanceTransaction,
  BalanceTransactionParams,
  ListBalanceTransactionsQuery,
} from './schemas.js';
import type { LedgerService } from './service.js';

const tags = ['Balance'];
const date = (value: string | undefined) => (value === undefined ? undefined : new Date(value));

export function ledgerRoutes(ledger: LedgerService) {
  return (app: App) => {
    app.get(
      '/balance',
      {
        schema: {
          tags,
          description:
            'The balance per currency: `available` (may be paid out) and `pending` (available later), each the sum of the nets of the balance transactions.',
          querystring: Type.Object({}, { additionalProperties: false }),
          response: { 200: envelope(Balance) },
        },
      },
      async (request) => ok(await ledger.balance(merchantOf(request))),
    );
    app.get(
      '/balance/summary',
      {
        schema: {
          tags,
          description:
            'The balance change of a period [from, to) per currency: opening balance + activity by reporting category = closing balance.',
          querystring: BalanceSummaryQuery,
          response: { 200: envelope(BalanceSummary) },
        },
      },
      async (request) =>
        ok(await ledger.summary(merchantOf(request), new Date(request.query.from), new Date(request.query.to))),
    );
    app.get(
      '/balance_transactions/:id',
      {
        schema: {
          tags,
          description: 'A balance transaction by its id.',
          params: BalanceTransactionParams,
          response: { 200: envelope(BalanceTransaction) },
        },
      },
      async (request) => ok(await ledger.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/balance_transactions',
      {
        schema: {
          tags,
          description:
            'Newest first. Filters: type, source, payoutId, created[gt|gte|lt|lte], availableOn[gt|gte|lt|lte] (ISO 8601).',
          querystring: ListBalanceTransactionsQuery,
          response: { 200: listOf(BalanceTransaction) },
        },
      },
      async (request) => {
        const query = request.query;
        return ok(
          await ledger.list(
            merchantOf(request),
            {
              type: query.type,
              source: query.source,
              payoutId: query.payoutId,
              ...createdBounds(query),
              availableOnGt: date(query['availableOn[gt]']),
              availableOnGte: date(query['availableOn[gte]']),
              availableOnLt: date(query['availableOn[lt]']),
              availableOnLte: date(query['availableOn[lte]']),
            },
            query,
          ),
        );
      },
    );
  };
}
