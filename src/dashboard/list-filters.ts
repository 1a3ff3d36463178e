/**
 * The filters that every list of money shares (issue 22, docs/dashboard.md#pages): status tabs with counts,
 * quick date ranges, a currency and an amount range typed in major units. The payments, refunds
 * and invoices lists build them from here, so they read and refuse the same way.
 */
import { currencyExponent, maxAmountDigits, normalizeCurrency } from '../money.js';
import { html, type SafeHtml } from '../web/html.js';
import { field, type FieldErrors } from './layout.js';
import { dateRanges, emptyState, statusTabs, statusWords, type StatusTab } from './ui.js';

/** Status tab counts stop at this many rows a status, shown as "99+" (docs/decisions/0022). */
export const statusCountCap = 100;

/** A field of a filter or form refused with its message (shown beside it). */
export const refuse = (name: string, message: string) => Object.assign(new Error(message), { field: name });

/**
 * An amount typed in major units ("12.50") as minor units of `currency` (two decimals when no
 * currency is chosen): staff read and type money as shoppers see it (issue 22). A refusal is
 * `name`'s and its message starts with `label` (the field as the form names it).
 */
export function minorUnitsOf(value: string, currency: string, name: string, label = name): bigint {
  const exponent = currencyExponent(currency || 'USD');
  const pattern = exponent === 0 ? /^(\d{1,18})$/ : new RegExp(`^(\\d{1,18})(?:[.,](\\d{1,${exponent}}))?$`);
  const match = pattern.exec(value.replace(/[\s']/g, ''));
  const example = exponent === 0 ? '1200' : `12.${'5'.padEnd(exponent, '0')}`;
  if (!match)
    throw refuse(
      name,
      `${label} must be an amount in ${currency || 'the currency'} with at most ${exponent} decimals, like ${example}`,
    );
  const minor = BigInt(match[1]!) * 10n ** BigInt(exponent) + BigInt((match[2] ?? '').padEnd(exponent, '0') || '0');
  if (minor.toString().length > maxAmountDigits) throw refuse(name, `${label} is larger than any payment can be`);
  return minor;
}

/** A YYYY-MM-DD filter as the first or last instant of that UTC day. */
export function dayBound(value: string | undefined, name: string, endOfDay: boolean): string | undefined {
  if (!value) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value)))
    throw refuse(name, `${name} must be a date (YYYY-MM-DD)`);
  return `${value}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z`;
}

/** The shared filters as the page's query gives them ('' when not given). */
export interface MoneyFilters {
  status: string;
  currency: string;
  amountMin: string;
  amountMax: string;
  from: string;
  to: string;
}

export function moneyFiltersOf(query: Record<string, string | undefined>): MoneyFilters {
  return {
    status: query.status ?? '',
    currency: query.currency ?? '',
    amountMin: query.amountMin ?? '',
    amountMax: query.amountMax ?? '',
    from: query.from ?? '',
    to: query.to ?? '',
  };
}

/** The currency and the amount range (major units, in that currency) as a service's search, in minor units. */
export function amountSearch(filters: Pick<MoneyFilters, 'currency' | 'amountMin' | 'amountMax'>): {
  currency?: string;
  amountGte?: bigint;
  amountLte?: bigint;
} {
  const search: { currency?: string; amountGte?: bigint; amountLte?: bigint } = {};
  const currencyText = filters.currency.trim();
  const currency = currencyText ? normalizeCurrency(currencyText) : '';
  if (currency === undefined) throw refuse('currency', 'currency must be an ISO 4217 code such as USD or EUR');
  if (currency) search.currency = currency;
  const min = filters.amountMin.trim();
  const max = filters.amountMax.trim();
  if (min) search.amountGte = minorUnitsOf(min, currency, 'amountMin');
  if (max) search.amountLte = minorUnitsOf(max, currency, 'amountMax');
  return search;
}

/** The date range as an API list query's created bounds (the first and last instant of the UTC days). */
export function createdQuery(filters: Pick<MoneyFilters, 'from' | 'to'>): Record<string, string | undefined> {
  return {
    'created[gte]': dayBound(filters.from, 'from', false),
    'created[lte]': dayBound(filters.to, 'to', true),
  };
}

/** The date range as the status counts' range. */
export function createdRange(filters: Pick<MoneyFilters, 'from' | 'to'>): { createdGte?: Date; createdLte?: Date } {
  const query = createdQuery(filters);
  return {
    createdGte: query['created[gte]'] ? new Date(query['created[gte]']) : undefined,
    createdLte: query['created[lte]'] ? new Date(query['created[lte]']) : undefined,
  };
}

/**
 * The tabs of a list: "All", then each status that is always shown, has rows in the range, or is
 * the one selected, labelled by `labels` or by its words.
 */
export function statusTabsOf(options: {
  statuses: readonly string[];
  counts: { total: number; byStatus: Record<string, number> };
  selected: string;
  alwaysShown: ReadonlySet<string>;
  labels?: Record<string, string>;
}): StatusTab[] {
  const { counts, selected, alwaysShown } = options;
  return [
    { value: '', label: 'All', count: counts.total },
    ...options.statuses
      .filter((status) => alwaysShown.has(status) || status === selected || (counts.byStatus[status] ?? 0) > 0)
      .map((status) => ({
        value: status,
        label: options.labels?.[status] ?? statusWords(status),
        count: counts.byStatus[status] ?? 0,
      })),
  ];
}

/**
 * Above a list: its status tabs (when counted) and the quick date ranges, each link keeping the
 * list's other filters (`filters`, the page's whole query).
 */
export function listNavigation(options: {
  path: string;
  filters: Record<string, string>;
  tabs: readonly StatusTab[];
  label: string;
  now: Date;
}): SafeHtml {
  const { status, ...keepForTabs } = options.filters;
  const { from, to, ...keepForRanges } = options.filters;
  return html`${
    options.tabs.length > 0
      ? statusTabs({
          path: options.path,
          name: 'status',
          selected: status ?? '',
          tabs: options.tabs,
          keep: keepForTabs,
          cap: statusCountCap,
          label: options.label,
        })
      : ''
  }
  ${dateRanges({ path: options.path, now: options.now, keep: keepForRanges, from: from ?? '', to: to ?? '' })}`;
}

/** The filter form's currency and amount range fields (major units). */
export function amountFields(filters: MoneyFilters, errors: FieldErrors | undefined): SafeHtml {
  return html`${field({ name: 'currency', label: 'Currency', value: filters.currency, errors, hint: 'e.g. USD' })}
  ${field({ name: 'amountMin', label: 'Amount from', value: filters.amountMin, errors, inputmode: 'decimal', hint: 'e.g. 10.00' })}
  ${field({ name: 'amountMax', label: 'Amount to', value: filters.amountMax, errors, inputmode: 'decimal', hint: 'e.g. 99.99' })}`;
}

/** The filter form's date fields (UTC days). */
export function dateFields(filters: MoneyFilters, errors: FieldErrors | undefined): SafeHtml {
  return html`${field({ name: 'from', label: 'From (date)', type: 'date', value: filters.from, errors })}
  ${field({ name: 'to', label: 'To (date)', type: 'date', value: filters.to, errors })}`;
}

/** The selected tab's status, kept by the filter form; and its refusal, which no field shows. */
export function statusKept(filters: MoneyFilters, errors: FieldErrors | undefined): SafeHtml {
  return html`<input type="hidden" name="status" value="${filters.status}" />
    ${errors?.status ? html`<p class="form-error" id="f-status-error" role="alert">${errors.status}</p>` : ''}`;
}

/**
 * A list's (or form's) refusal as field errors: a field refused here names itself; one refused by the
 * API's schema (`fallback`) is given the page's name for it through `renamed`.
 */
export function refusedFilters(
  err: unknown,
  fallback: (err: unknown) => FieldErrors,
  renamed: Record<string, string> = {},
): FieldErrors {
  const { field: name, message } = err as { field?: string; message?: string };
  if (name) return { [name]: message || `${name} is not valid` };
  const errors = fallback(err);
  for (const [from, to] of Object.entries(renamed))
    if (errors[from] !== undefined) {
      errors[to] = errors[from]!;
      delete errors[from];
    }
  return errors;
}

/** A money list's empty state when its filters match nothing: clear them, or widen the dates. */
export function noMatchState(things: string, listPath: string): SafeHtml {
  return emptyState({
    title: `No ${things} match these filters`,
    body: html`<a href="${listPath}">Clear the filters</a> or widen the date range.`,
  });
}
