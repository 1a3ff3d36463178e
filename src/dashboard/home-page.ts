import type { App } from '../http/server.js';
import type { DaySummary } from '../payments/daily-summary.js';
import { can } from '../team/permissions.js';
import { barChart } from './chart.js';
import { html, type SafeHtml } from '../web/html.js';
import { layout, money, table, when } from './layout.js';
import { page, type DashboardDeps } from './kit.js';
import { comparison, deliveryBadge, emptyState, waitsForPreviousDelivery } from './ui.js';
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

/** The home's period choices, in days: the figures of the period and of the one before it. */
const periods = [7, 30] as const;

/** The sums of a run of days: payments, decided ones, and the volume per currency. */
function totalsOf(run: readonly DaySummary[]) {
  const volume: Record<string, bigint> = {};
  let count = 0;
  let succeeded = 0;
  let failed = 0;
  for (const day of run) {
    count += day.count;
    succeeded += day.succeeded;
    failed += day.failed;
    for (const [currency, amount] of Object.entries(day.volume))
      volume[currency] = (volume[currency] ?? 0n) + BigInt(amount);
  }
  return { count, succeeded, failed, volume };
}

/** The chosen period compared with the one before it (issue 22): volume per currency, count, success rate. */
function periodFigures(summary: readonly DaySummary[], period: number): SafeHtml {
  const current = totalsOf(summary.slice(-period));
  const previous = totalsOf(summary.slice(-2 * period, -period));
  const against = `the previous ${period} days`;
  const currencies = [...new Set([...Object.keys(current.volume), ...Object.keys(previous.volume)])].sort();
  const rate = successRate(current);
  const previousRate = successRate(previous);
  return html`<div class="figures" id="period-figures">
    ${(currencies.length === 0 ? ['USD'] : currencies).map(
      (currency) =>
        html`<p class="card">
          Volume (${currency})
          <span class="value">${money((current.volume[currency] ?? 0n).toString(), currency)}</span>
          ${comparison(Number(current.volume[currency] ?? 0n), Number(previous.volume[currency] ?? 0n), against)}
        </p>`,
    )}
    <p class="card">
      Payments <span class="value" id="period-count">${current.count}</span>
      ${comparison(current.count, previous.count, against)}
    </p>
    <p class="card">
      Success rate <span class="value" id="period-rate">${percent(rate)}</span>
      ${
        rate !== null && previousRate !== null
          ? html`<span class="delta ${rate >= previousRate ? 'up' : 'down'}"
              >${rate >= previousRate ? '+' : '−'}${Math.abs(rate - previousRate).toFixed(1)} points vs ${against}</span
            >`
          : html`<span class="delta neutral">Nothing to compare with ${against}</span>`
      }
    </p>
  </div>`;
}

/**
 * Issue 20: the endpoints that need attention (failing, or disabled by Tessera), with why and when
 * the next attempt is due.
 */
function attentionTable(endpoints: Awaited<ReturnType<DashboardDeps['endpointHealth']['needingAttention']>>): SafeHtml {
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
    )}`;
}

/** Home (issues 11, 22): the period against the previous one, today, the last 30 days, deliveries in trouble. */
export function homePage(app: App, deps: DashboardDeps): void {
  page(app, deps, 'GET', '/', 'payments.read', async (ctx) => {
    const asked = Number((ctx.request.query as Record<string, string>).period);
    const period = (periods as readonly number[]).includes(asked) ? asked : periods[0];
    const history = await deps.payments.dailySummary(ctx.merchant, 2 * Math.max(...periods));
    const summary = history.slice(-days);
    const today = summary[summary.length - 1]!;
    // Deliveries given up and deliveries still being retried: both need a look (issue 22).
    const troubled = can(ctx.actor.role, 'webhooks.read')
      ? await Promise.all([
          deps.webhookDeliveries.list(ctx.merchant, { status: 'failed', limit: 5 }),
          deps.webhookDeliveries.list(ctx.merchant, { status: 'pending', limit: 20 }),
        ]).then(([failed, pending]) => [
          ...pending.data.filter((delivery) => delivery.attempts > 0).slice(0, 5),
          ...failed.data,
        ])
      : null;
    const anyPayment = history.some((day) => day.count > 0);
    const attention = can(ctx.actor.role, 'webhooks.read')
      ? await deps.endpointHealth.needingAttention(ctx.merchant)
      : null;
    return layout(
      { title: 'Home', session: ctx.session, current: '/' },
      html`<h1>Home</h1>
        ${
          anyPayment
            ? ''
            : emptyState({
                title: 'No payments yet',
                body: 'Make a test payment with the API (the card 4242 4242 4242 4242 succeeds in test mode), or send a sample event from your terminal:',
                command: 'npx tessera trigger payment.succeeded',
              })
        }
        <h2>The last ${period} days</h2>
        <nav class="tabs" aria-label="Period">
          <ul>
            ${periods.map(
              (choice) =>
                html`<li>
                  <a href="/dashboard?period=${choice}" ${choice === period ? html`aria-current="page"` : ''}
                    >${choice} days</a
                  >
                </li>`,
            )}
          </ul>
        </nav>
        ${periodFigures(history, period)}
        <h2>Today (${today.day}, UTC)</h2>
        <div class="figures">
          <p class="card">Volume <span class="value" id="today-volume">${volumeText(today.volume)}</span></p>
          <p class="card">Payments <span class="value" id="today-count">${today.count}</span></p>
          <p class="card">Success rate <span class="value" id="today-rate">${percent(successRate(today))}</span></p>
        </div>
        <h2>The last ${days} days, day by day</h2>
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
        ${attention ? attentionTable(attention) : ''}
        ${
          troubled
            ? html`<h2>Deliveries failed or being retried</h2>
                ${table(
                  ['Delivery', 'Status', 'Target', 'Attempts', 'Next attempt'],
                  troubled.map(
                    (delivery) =>
                      html`<tr>
                        <td><a href="/dashboard/developers/webhooks/${delivery.endpointId}">${delivery.id}</a></td>
                        <td>${deliveryBadge(delivery)}</td>
                        <td>${delivery.url}</td>
                        <td class="num">${delivery.attempts}</td>
                        <td>
                          ${waitsForPreviousDelivery(delivery) ? 'after the one before it' : when(delivery.nextAttemptAt)}
                        </td>
                      </tr>`,
                  ),
                  'Every delivery went through: none failed, none is being retried.',
                )}`
            : ''
        }`,
    );
  });
}
