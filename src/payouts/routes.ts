import { Readable } from 'node:stream';
import { csvCell } from '../dashboard/csv.js';
import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import {
  CreatePayoutBody,
  ListPayoutsQuery,
  Payout,
  PayoutParams,
  Reconciliation,
  reconciliationColumns,
} from './schemas.js';
import type { Payout as PayoutObject, ReconciliationRow } from './schemas.js';
import type { PayoutService } from './service.js';

const tags = ['Payouts'];

/**
 * One cell: a signed whole number as it is, so that a spreadsheet reads −500 as a number (a
 * number cannot be a formula); any other text through csvCell, which defuses formulas.
 */
const reportCell = (value: string | null) => (value !== null && /^-?\d+$/.test(value) ? value : csvCell(value));
const reportLine = (cells: ReadonlyArray<string | null>) => `${cells.map(reportCell).join(',')}\r\n`;

/** The report as CSV lines, header first, a batch of rows at a time. */
async function* csvLines(rows: AsyncIterable<ReconciliationRow>) {
  yield reportLine(reconciliationColumns);
  for await (const row of rows) yield reportLine(reconciliationColumns.map((column) => row[column]));
}

/** The report as the API's JSON envelope, written as its rows are read. */
async function* jsonChunks(payout: PayoutObject, rows: AsyncIterable<ReconciliationRow>) {
  yield `{"code":"success","msg":"success","data":{"payout":${JSON.stringify(payout)},"rows":[`;
  let first = true;
  for await (const row of rows) {
    yield `${first ? '' : ','}${JSON.stringify(row)}`;
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
            "Pays `amount` of the available balance out to the merchant's bank account (in its currency). More than is available: `amount_too_large` with `data.available`; no bank account: 409 `bank_account_missing`.",
          body: CreatePayoutBody,
          response: { 200: envelope(Payout) },
        },
      },
      async (request) => ok(await payouts.create(merchantOf(request), request.body)),
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
        const { payout, rows } = await payouts.reconciliation(merchantOf(request), request.params.id);
        if ((request.headers.accept ?? '').includes('text/csv')) {
          return reply
            .type('text/csv; charset=utf-8')
            .header('content-disposition', `attachment; filename="reconciliation-${payout.id}.csv"`)
            .send(Readable.from(csvLines(rows)) as never);
        }
        // A stream is written as it is read, past the schema's serializer (whose shape it has).
        return reply.type('application/json; charset=utf-8').send(Readable.from(jsonChunks(payout, rows)) as never);
      },
    );
  };
}
