import type { App } from '../http/server.js';
import type { DaySummary } from '../payments/daily-summary.js';
import { can } from '../team/permissions.js';
import { barChart } from './chart.js';
import { html, type SafeHtml } from './html.js';
import { layout, money, table, when } from './layout.js';
import { page, type DashboardDeps, type PageContext } from './kit.js';
import { healthBadge } from './webhook-recover-pages.js';

const days = 30;

/** Succeeded out of the payments that reached an outcome (succeeded or failed); null when none did. */
function successRate(day: Pick<DaySummary, 'succeeded' | 'failed'>): number | null {
  const decided = day.succeeded + day.failed;
  return decided === 0 ? null : (day.succeeded * 100) / decided;
}

const percent = (rate: number | null) => (rate === null ? '—' : `${rate.toFixed(1)} %`);

/** The currencies with volume in the period, largest total first (at most three charts). */
function currenciesOf(summary: readonly DaySummary[]): string[] {
  const totals = new Map<string, bigint>();
  for (const day of summary)
    for (const [currency, volume] of Object.entries(day.volume))
      totals.set(currency, (totals.get(currency) ?? 0n) + BigInt(volume));
  const sorted = [...totals].sort((a, b) => (a[1] > b[1] ? -1 : a[1] < b[1] ? 1 : 0)).map(([currency]) => currency);
  return sorted.length === 0 ? ['USD'] : sorted.slice(0, 3);
}

const volumeText = (volume: Record<string, string>) =>
  Object.keys(volume).length === 0
    ? '0'
    : Object.entries(volume)
        .map(([currency, amount]) => money(amount, currency))
        .join(', ');

function charts(summary: readonly DaySummary[]): SafeHtml[] {
  const volumeCharts = currenciesOf(summary).map((currency) => {
    const values = summary.map((day) => BigInt(day.volume[currency] ?? '0'));
    const max = values.reduce((a, b) => (b > a ? b : a), 0n);
    return barChart({
      id: `volume-${currency}`,
      title: `Volume per day (${currency}, succeeded payments)`,
      maxText: money(max.toString(), currency),
      // Bar heights only: a Number is exact enough to draw, the texts keep the exact amounts.
      bars: summary.map((day, index) => ({
        label: day.day,
        value: Number(values[index]),
        text: money(values[index]!.toString(), currency),
      })),
    });
  });
  const maxCount = Math.max(...summary.map((day) => day.count), 0);
  return [
    ...volumeCharts,
    barChart({
      id: 'count',
      title: 'Payments per day',
      maxText: String(maxCount),
      bars: summary.map((day) => ({ label: day.day, value: day.count, text: `${day.count} payments` })),
    }),
    barChart({
      id: 'success',
      title: 'Success rate per day (succeeded ÷ succeeded or failed)',
      maxText: '100 %',
      bars: summary.map((day) => ({ label: day.day, value: successRate(day) ?? 0, text: percent(successRate(day)) })),
    }),
  ];
}

/**
 * Issue 20: the endpoints that need attention (failing, or disabled by Tessera), and the deliveries
 * given up or still being retried: while deliveries retry, the home page never says "None".
 */
async function webhookAttention(deps: DashboardDeps, merchant: PageContext['merchant']): Promise<SafeHtml> {
  const [endpoints, failed, pending] = await Promise.all([
    deps.endpointHealth.needingAttention(merchant),
    deps.webhookDeliveries.list(merchant, { status: 'failed', limit: 5 }),
    deps.webhookDeliveries.list(merchant, { status: 'pending', limit: 50 }),
  ]);
  // Pending with an attempt made: a failed attempt, waiting for the next one.
  const retrying = pending.data.filter((delivery) => delivery.attempts > 0).slice(0, 5);
  const deliveries = [
    ...retrying.map((delivery) => ({ delivery, state: `retrying, next attempt ${when(delivery.nextAttemptAt)}` })),
    ...failed.data.map((delivery) => ({ delivery, state: 'failed (given up)' })),
  ];
  return html`<h2>Endpoints that need attention</h2>
    ${table(
      ['Endpoint', 'Health', 'Last error', 'Next attempt'],
      endpoints.map(
        (endpoint) =>
          html`<tr>
            <td>
              <a href="/dashboard/developers/webhooks/${endpoint.id}"
                >${endpoint.kind === 'dynamic' ? 'notifyUrl (dynamic)' : endpoint.url}</a
              >
            </td>
            ${healthBadge(endpoint, 'td')}
            <td>${endpoint.lastError ?? ''}</td>
            <td>${endpoint.nextAttemptAt ? when(endpoint.nextAttemptAt) : '—'}</td>
          </tr>`,
      ),
      'None: every endpoint is healthy.',
    )}
    <h2>Recent failed and retrying deliveries</h2>
    ${table(
      ['Delivery', 'Target', 'State', 'Created'],
      deliveries.map(
        ({ delivery, state }) =>
          html`<tr>
            <td><a href="/dashboard/developers/webhooks/${delivery.endpointId}">${delivery.id}</a></td>
            <td>${delivery.url}</td>
            <td class="${delivery.status === 'failed' ? 'status-failed' : 'status-pending'}">${state}</td>
            <td>${when(delivery.created)}</td>
          </tr>`,
      ),
      'None: no delivery has failed or is being retried.',
    )}`;
}

/** Home (issue 11): today's figures, the last 30 days as charts and as a table, webhooks needing attention. */
export function homePage(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/', 'payments.read', async (ctx) => {
    const summary = await deps.payments.dailySummary(ctx.merchant, days);
    const today = summary[summary.length - 1]!;
    const webhooks = can(ctx.actor.role, 'webhooks.read') ? await webhookAttention(deps, ctx.merchant) : null;
    return layout(
      { title: 'Home', session: ctx.session, current: '/' },
      html`<h1>Home</h1>
        <h2>Today (${today.day}, UTC)</h2>
        <div class="figures">
          <p class="card">Volume <span class="value" id="today-volume">${volumeText(today.volume)}</span></p>
          <p class="card">Payments <span class="value" id="today-count">${today.count}</span></p>
          <p class="card">Success rate <span class="value" id="today-rate">${percent(successRate(today))}</span></p>
        </div>
        <h2>The last ${days} days</h2>
        ${charts(summary)}
        <details>
          <summary>The same figures as a table</summary>
          ${table(
            ['Day', 'Volume', 'Payments', 'Succeeded', 'Failed', 'Success rate'],
            [...summary].reverse().map(
              (day) =>
                html`<tr>
                  <td>${day.day}</td>
                  <td class="num">${volumeText(day.volume)}</td>
                  <td class="num">${day.count}</td>
                  <td class="num">${day.succeeded}</td>
                  <td class="num">${day.failed}</td>
                  <td class="num">${percent(successRate(day))}</td>
                </tr>`,
            ),
            'No payments.',
          )}
        </details>
        ${webhooks ?? ''}`,
    );
  });
}
