import { Readable } from 'node:stream';
import type { App } from '../http/server.js';
import { html, type SafeHtml } from '../web/html.js';
import { layout, table, when } from './layout.js';
import { page, type DashboardDeps } from './kit.js';
import { reconciliationCsv } from '../payouts/reconciliation-csv.js';
import { moneyCell, moneyText, statusBadge } from './ui.js';
import { can } from '../team/permissions.js';

const base = '/dashboard';
/** The rows of a payout's reconciliation the page shows; the CSV has all of them. */
const shownRows = 200;

/**
 * Balance and payouts (docs/balances.md): available and pending per currency, the payout schedule
 * and bank account, the payouts, and each payout's reconciliation with its CSV. The Owner changes
 * the schedule and the bank account on their own page (payout-settings-pages.ts).
 */
export function balancePages(app: App, deps: DashboardDeps): void {
  const { ledger, payouts } = deps;
  if (!ledger || !payouts) return;

  page(app, deps, 'GET', '/balance', 'payments.read', async (ctx) => {
    const [balance, merchant, recent] = await Promise.all([
      ledger.balance(ctx.merchant),
      deps.merchants.retrieve(ctx.merchant.merchantId),
      payouts.list(ctx.merchant, { limit: 50 }),
    ]);
    const pendingOf = new Map(balance.pending.map((row) => [row.currency, row.amount]));
    const { payoutSchedule: schedule, bankAccounts } = merchant;
    const accountOf = new Map(bankAccounts.map((account) => [account.currency, account]));
    const anchor = schedule.weeklyAnchor ?? (schedule.monthlyAnchor === null ? null : `day ${schedule.monthlyAnchor}`);
    const when_ =
      schedule.interval === 'manual' ? 'By hand only' : `${schedule.interval}${anchor ? ` (${anchor})` : ''}`;
    const accounts =
      bankAccounts.length === 0
        ? 'No bank account yet: the Owner (or your account manager) sets one.'
        : bankAccounts.map((account) => `${account.currency} to account •••• ${account.accountNumberLast4}`).join('; ');
    // docs/balances.md, Bank accounts: a currency without an account is not paid out, and says so.
    const paidTo = (currency: string) => {
      const account = accountOf.get(currency);
      return account ? `account •••• ${account.accountNumberLast4}` : `Not paid out: no ${currency} bank account`;
    };
    const rows = recent.data.map(
      (payout) =>
        html`<tr>
          ${moneyCell(payout.amount, payout.currency)}
          <td>${statusBadge(payout.status)}</td>
          <td><a href="${base}/payouts/${payout.id}">${payout.id}</a></td>
          <td>${payout.automatic ? 'scheduled' : 'by hand'}</td>
          <td>${when(payout.created)}</td>
        </tr>`,
    );
    const saved = (ctx.request.query as { saved?: string }).saved === 'payout-settings';
    return layout(
      {
        title: 'Balance',
        session: ctx.session,
        current: '/balance',
        ...(saved ? { notice: 'Payout settings saved.' } : {}),
      },
      html`<h1>Balance</h1>
        ${table(
          ['Currency', 'Available', 'Pending', 'Paid out to'],
          balance.available.map(
            (row) =>
              html`<tr>
                <td>${row.currency}</td>
                ${moneyCell(row.amount, row.currency)} ${moneyCell(pendingOf.get(row.currency) ?? '0', row.currency)}
                <td>${paidTo(row.currency)}</td>
              </tr>`,
          ),
          'No money has moved yet.',
          'Balance',
        )}
        <dl class="facts card">
          <dt>Payouts</dt>
          <dd>${when_}</dd>
          <dt>Bank accounts</dt>
          <dd>${accounts}</dd>
        </dl>
        ${
          can(ctx.actor.role, 'payouts.manage')
            ? html`<p><a href="${base}/balance/settings">Change the payout schedule or bank account</a></p>`
            : ''
        }
        <h2>Payouts</h2>
        ${table(['Amount', 'Status', 'Payout', 'Made', 'Created'], rows, 'No payouts yet.', 'Payouts')}`,
    );
  });

  page(app, deps, 'GET', '/payouts/:id', 'payments.read', async (ctx) => {
    const { id } = ctx.request.params as { id: string };
    const { payout, batches } = await payouts.reconciliation(ctx.merchant, id);
    const rows: SafeHtml[] = [];
    let more = false;
    for await (const batch of batches) {
      for (const row of batch) {
        if (rows.length >= shownRows) {
          more = true;
          break;
        }
        rows.push(
          html`<tr>
            <td>${row.type}</td>
            <td>
              ${row.source.startsWith('pt_') ? html`<a href="${base}/payments/${row.source}">${row.source}</a>` : row.source}
            </td>
            <td>${row.orderNo ?? '—'}</td>
            ${moneyCell(row.gross, row.currency)} ${moneyCell(row.fee, row.currency)}
            ${moneyCell(row.net, row.currency)}
            <td>${row.cardBrand && row.last4 ? `${row.cardBrand} •••• ${row.last4}` : '—'}</td>
            <td>${when(row.created)}</td>
          </tr>`,
        );
      }
      if (more) break;
    }
    return layout(
      { title: `Payout ${payout.id}`, session: ctx.session, current: '/balance' },
      html`<p><a href="${base}/balance">← Balance</a></p>
        <h1>${moneyText(payout.amount, payout.currency)} ${statusBadge(payout.status)}</h1>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${payout.id}</dd>
          <dt>To</dt>
          <dd>account •••• ${payout.bankAccountLast4}</dd>
          <dt>Made</dt>
          <dd>${payout.automatic ? 'by the payout schedule' : 'by hand'}</dd>
          <dt>Arrives</dt>
          <dd>${when(payout.arrivalDate)}</dd>
          ${
            payout.failureCode
              ? html`<dt>Failure</dt>
                  <dd>${payout.failureCode}: ${payout.failureMessage ?? ''}</dd>`
              : ''
          }
        </dl>
        <h2>Reconciliation</h2>
        <p>
          <a href="${base}/payouts/${payout.id}/reconciliation.csv" download>Download CSV</a>${
            more ? ` (the first ${shownRows} rows are shown here; the CSV has them all)` : ''
          }
        </p>
        ${table(
          ['Type', 'Source', 'Order', 'Gross', 'Fee', 'Net', 'Card', 'Created'],
          rows,
          payout.automatic
            ? 'This payout settled no balance transactions.'
            : 'A payout made by hand settles no balance transactions: the next scheduled payout settles it.',
          'Reconciliation',
        )}`,
    );
  });

  page(app, deps, 'GET', '/payouts/:id/reconciliation.csv', 'payments.read', async (ctx) => {
    const { id } = ctx.request.params as { id: string };
    const { batches } = await payouts.reconciliation(ctx.merchant, id);
    ctx.reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="reconciliation-${id}.csv"`)
      .send(Readable.from(reconciliationCsv(batches)));
  });
}
