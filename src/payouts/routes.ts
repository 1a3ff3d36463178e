import { Readable } from 'node:stream';
import { reconciliationCsv } from './reconciliation-csv.js';
import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import { CreatePayoutBody, ListPayoutsQuery, Payout, PayoutParams, Reconciliation } from './schemas.js';
import type { Payout as PayoutObject, ReconciliationRow } from './schemas.js';
import type { PayoutService } from './service.js';

const tags = ['Payouts'];

/** The report as the API's JSON envelope, one chunk per batch of rows. */
async function* jsonChunks(payout: PayoutObject, batches: AsyncIterable<ReconciliationRow[]>) {
  yield `{"code":"success","msg":"success","data":{"payout":${JSON.stringify(payout)},"rows":[`;
  let first = true;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    yield `${first ? '' : ','}${batch.map((row) => JSON.stringify(row)).join(',')}`;
    first = false;
  }
  yield ']}}';
}

export function payoutRoutes(payouts: PayoutService) {
  return (app: App) => {
    app.post(
      '/payouts/create',
      {
        schema: {
          tags,
          description:
            "Pays `amount` of the available balance in `currency` out to the merchant's bank account in that currency (one per currency). More than is available: `amount_too_large` with `data.available`; no bank account in the currency: 409 `bank_account_missing`.",
          body: CreatePayoutBody,
          response: { 200: envelope(Payout) },
        },
      },
      async (request) => ok(await payouts.create(merchantOf(request), request.body)),
    );
    app.post(
      '/payouts/:id/cancel',
      {
        schema: {
          tags,
          description:
            'Cancels a payout the bank has not taken yet (status `pending`); a `payout_cancel` balance transaction returns its amount to the available balance and `payout.canceled` is sent. Once `in_transit` (or later): 409 `payout_not_cancelable` with `data.status`.',
          params: PayoutParams,
          response: { 200: envelope(Payout) },
        },
      },
      async (request) => ok(await payouts.cancel(merchantOf(request), request.params.id)),
    );
    app.get(
      '/payouts/:id',
      {
        schema: { tags, description: 'A payout by its id.', params: PayoutParams, response: { 200: envelope(Payout) } },
      },
      async (request) => ok(await payouts.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/payouts',
      {
        schema: {
          tags,
          description: 'Newest first. Filters: status, created[gt|gte|lt|lte] (ISO 8601).',
          querystring: ListPayoutsQuery,
          response: { 200: listOf(Payout) },
        },
      },
      async (request) => ok(await payouts.list(merchantOf(request), request.query)),
    );
    app.get(
      '/payouts/:id/reconciliation',
      {
        schema: {
          tags,
          description:
            'Every balance transaction the payout settles (their nets sum to its amount), streamed; as CSV with `Accept: text/csv`.',
          params: PayoutParams,
          response: { 200: envelope(Reconciliation) },
        },
      },
      async (request, reply) => {
        const { payout, batches } = await payouts.reconciliation(merchantOf(request), request.params.id);
        if ((request.headers.accept ?? '').includes('text/csv')) {
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="reconciliation-${payout.id}.csv"`)
            .send(Readable.from(reconciliationCsv(batches)) as never);
        }
        // A stream is written as it is read, past the schema's serializer (whose shape it has).
        return reply.type('application/json; charset=utf-8').send(Readable.from(jsonChunks(payout, batches)) as never);
      },
    );
  };
}
