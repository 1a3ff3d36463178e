/**
 * The dashboard's reusable page pieces (issue 22, docs/dashboard.md#pages): badges, status tabs with counts,
 * quick date ranges, people instead of ids, money, timelines, comparisons and empty states.
 * Every page builds its lists from these, so a list reads the same everywhere and a new page
 * gets the phone layout and the accessibility of the others for free.
 */
import { formatAmount } from '../money.js';
import { html, type HtmlValue, type SafeHtml } from '../web/html.js';

/** How a status reads at a glance: the badge's colour class. The word is always written too. */
export type Tone = 'good' | 'bad' | 'warn' | 'info' | 'neutral';

export function badge(label: string, tone: Tone): SafeHtml {
  return html`<span class="badge badge-${tone}">${label}</span>`;
}

/** A snake_case status as words: `requires_action` → "Requires action". */
export function statusWords(status: string): string {
  const words = status.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const toneOf: Record<string, Tone> = {
  succeeded: 'good',
  paid: 'good',
  enabled: 'good',
  delivered: 'good',
  complete: 'good',
  passed: 'good',
  failed: 'bad',
  disabled: 'bad',
  uncollectible: 'bad',
  disputed: 'bad',
  canceled: 'neutral',
  void: 'neutral',
  draft: 'neutral',
  expired: 'neutral',
  refunded: 'info',
  partially_refunded: 'info',
  open: 'info',
  won: 'good',
  lost: 'bad',
  accepted: 'neutral',
  warning_closed: 'neutral',
};

/** A status badge with the tone that status usually has (pending states are "warn"). */
export function statusBadge(status: string, label = statusWords(status)): SafeHtml {
  return badge(label, toneOf[status] ?? 'warn');
}

/** A delivery as the dashboard reads it; `nextAttemptAt` where known (the API's WebhookDelivery). */
interface DeliveryState {
  status: string;
  attempts: number;
  nextAttemptAt?: string | null;
}

/**
 * Whether a pending delivery waits for the one before it in a recover's chain (docs/decisions/0030):
 * it has no time of its own until that one is answered.
 */
export function waitsForPreviousDelivery(delivery: DeliveryState): boolean {
  return delivery.status === 'pending' && delivery.nextAttemptAt === null;
}

/**
 * A webhook delivery's status as a badge: a pending delivery already tried reads "Retrying", one
 * not tried yet "Pending", one of a recover waiting for the delivery before it "Waiting" with why;
 * home, a payment's timeline, an endpoint's log and an event read the same.
 */
export function deliveryBadge(delivery: DeliveryState): SafeHtml {
  if (waitsForPreviousDelivery(delivery)) {
    return html`${statusBadge('waiting', 'Waiting')} <span class="hint">${waitingWords}</span>`;
  }
  return delivery.status === 'pending' && delivery.attempts > 0
    ? statusBadge('retrying', 'Retrying')
    : statusBadge(delivery.status);
}

/** What a delivery of a recover's chain waits for, in words (beside its badge, as its next attempt). */
export const waitingWords = 'recovered in order: sent once the one before it is answered';

/** A count shown on a tab: exact up to the cap, then "cap-1+" (the count stopped reading there). */
export function cappedCount(count: number, cap: number): string {
  return count >= cap ? `${cap - 1}+` : String(count);
}

export interface StatusTab {
  /** The query value of the tab; '' for "All". */
  value: string;
  label: string;
  count: number;
}

/**
 * Status tabs with counts: links that keep the other filters (`keep`) and replace `name`. The
 * selected tab has aria-current; counts above `cap - 1` read "99+" (docs/decisions/0022).
 */
export function statusTabs(options: {
  path: string;
  name: string;
  selected: string;
  tabs: readonly StatusTab[];
  keep: Record<string, string>;
  cap: number;
  label: string;
}): SafeHtml {
  return html`<nav class="tabs" aria-label="${options.label}">
    <ul>
      ${options.tabs.map((tab) => {
        const href = withQuery(options.path, { ...options.keep, [options.name]: tab.value });
        return html`<li>
          <a href="${href}" ${tab.value === options.selected ? html`aria-current="page"` : ''}
            >${tab.label} <span class="count">${cappedCount(tab.count, options.cap)}</span></a
          >
        </li>`;
      })}
    </ul>
  </nav>`;
}

/** `path?query` with the empty values left out. */
export function withQuery(path: string, query: Record<string, string>): string {
  const search = new URLSearchParams(Object.entries(query).filter(([, value]) => value !== '')).toString();
  return search ? `${path}?${search}` : path;
}

const dayMs = 24 * 60 * 60 * 1000;

/**
 * Quick date ranges ("Today", "Last 7 days", …) as links that set `from` and `to` (UTC days,
 * YYYY-MM-DD) and keep the other filters. `now` is the injected clock's.
 */
export function dateRanges(options: {
  path: string;
  now: Date;
  keep: Record<string, string>;
  from: string;
  to: string;
}): SafeHtml {
  const today = options.now.toISOString().slice(0, 10);
  const daysAgo = (days: number) => new Date(options.now.getTime() - days * dayMs).toISOString().slice(0, 10);
  const monthStart = `${today.slice(0, 8)}01`;
  const ranges: Array<[string, string, string]> = [
    ['Today', today, today],
    ['Last 7 days', daysAgo(6), today],
    ['Last 30 days', daysAgo(29), today],
    ['This month', monthStart, today],
    ['All time', '', ''],
  ];
  return html`<nav class="ranges" aria-label="Date range">
    <ul>
      ${ranges.map(([label, from, to]) => {
        const href = withQuery(options.path, { ...options.keep, from, to });
        const current = from === options.from && to === options.to;
        return html`<li><a href="${href}" ${current ? html`aria-current="true"` : ''}>${label}</a></li>`;
      })}
    </ul>
  </nav>`;
}

/** An amount in minor units (a string of digits) for people, in major units with its currency. */
export function moneyText(amount: string | bigint, currency: string): string {
  return `${formatAmount(BigInt(amount), currency)} ${currency}`;
}

/** A money cell that never wraps (tabular figures, the currency in a quieter tone). */
export function moneyCell(amount: string | bigint, currency: string): SafeHtml {
  return html`<td class="num money">
    ${formatAmount(BigInt(amount), currency)} <span class="currency">${currency}</span>
  </td>`;
}

/** What lists show for a person: the name and, quieter, the e-mail; the id only when neither is known. */
export interface Person {
  name: string | null;
  email: string | null;
}

export function personText(person: Person | undefined, id: string | null): SafeHtml | string {
  if (!person || (!person.name && !person.email)) return id ?? '—';
  if (person.name && person.email)
    return html`<span class="person">${person.name} <span class="muted">${person.email}</span></span>`;
  return html`<span class="person">${person.name ?? person.email}</span>`;
}

/** "What to do next" for an empty list: a sentence, then an action or a command to copy. */
export function emptyState(options: { title: string; body: HtmlValue; command?: string }): SafeHtml {
  return html`<div class="empty-state card">
    <p class="empty-title">${options.title}</p>
    <p>${options.body}</p>
    ${options.command ? html`<pre class="command"><code>${options.command}</code></pre>` : ''}
  </div>`;
}

export interface TimelineEntry {
  when: string;
  title: HtmlValue;
  detail?: HtmlValue;
  tone?: Tone;
}

/** A vertical timeline, newest first: an ordered list, so screen readers count its entries. */
export function timeline(entries: readonly TimelineEntry[], empty: string): SafeHtml {
  if (entries.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<ol class="timeline">
    ${entries.map(
      (entry) =>
        html`<li class="tone-${entry.tone ?? 'neutral'}">
          <p class="when">${entry.when}</p>
          <p class="what">${entry.title}</p>
          ${entry.detail ? html`<div class="detail">${entry.detail}</div>` : ''}
        </li>`,
    )}
  </ol>`;
}

/**
 * A figure beside the same figure of the previous period: "+12.5 % vs the previous 7 days".
 * `null` when the previous period had nothing to compare with.
 */
export function comparison(current: number, previous: number, period: string): SafeHtml {
  if (previous === 0)
    return html`<span class="delta neutral">${current === 0 ? 'No change' : 'New'} vs ${period}</span>`;
  const change = ((current - previous) * 100) / previous;
  const tone = change > 0 ? 'up' : change < 0 ? 'down' : 'neutral';
  const sign = change > 0 ? '+' : change < 0 ? '−' : '';
  return html`<span class="delta ${tone}">${sign}${Math.abs(change).toFixed(1)} % vs ${period}</span>`;
}
