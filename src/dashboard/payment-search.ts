/**
 * The payments list's filters (the page's query) as the payment service's query and search; the
 * CSV export reads the same filters through the same function.
 */
import { ListPaymentsQuery } from '../payments/params-schemas.js';
import { paymentStatuses } from '../payments/states.js';
import type { PaymentSearch } from '../payments/service.js';
import { currencyExponent, maxAmountDigits, normalizeCurrency } from '../money.js';
import { given, validated } from './validate.js';

/** A field of the search form refused with its message (shown beside it). */
export const refuse = (name: string, message: string) => Object.assign(new Error(message), { field: name });

/**
 * An amount typed in major units ("12.50") as minor units of `currency` (two decimals when no
 * currency is chosen): staff read and type money as shoppers see it (issue 22).
 */
export function minorUnitsOf(value: string, currency: string, name: string): bigint {
  const exponent = currencyExponent(currency || 'USD');
  const pattern = exponent === 0 ? /^(\d{1,18})$/ : new RegExp(`^(\\d{1,18})(?:[.,](\\d{1,${exponent}}))?$`);
  const match = pattern.exec(value.replace(/[\s']/g, ''));
  const example = exponent === 0 ? '1200' : `12.${'5'.padEnd(exponent, '0')}`;
  if (!match)
    throw refuse(
      name,
      `${name} must be an amount in ${currency || 'the currency'} with at most ${exponent} decimals, like ${example}`,
    );
  const minor = BigInt(match[1]!) * 10n ** BigInt(exponent) + BigInt((match[2] ?? '').padEnd(exponent, '0') || '0');
  if (minor.toString().length > maxAmountDigits) throw refuse(name, `${name} is larger than any payment can be`);
  return minor;
}

/**
 * The search box and the status, currency and amount filters, as the payment service's search
 * (issue 11): a payment id finds that payment, an e-mail address the payments of that customer
 * or card holder, anything else an order number.
 */
function searchOf(filters: Record<string, string>): PaymentSearch {
  const search: PaymentSearch = {};
  const q = filters.q?.trim() ?? '';
  if (q.length > 254) throw refuse('q', 'q must be at most 254 characters');
  if (/^pt_\d{19}$/.test(q)) search.ids = [q];
  else if (q.includes('@')) search.email = q;
  if (filters.status) {
    if (!(paymentStatuses as readonly string[]).includes(filters.status))
      throw refuse('status', `status must be one of: ${paymentStatuses.join(', ')}`);
    search.statuses = [filters.status];
  }
  const currencyText = filters.currency?.trim() ?? '';
  const currency = currencyText ? normalizeCurrency(currencyText) : '';
  if (currency === undefined) throw refuse('currency', 'currency must be an ISO 4217 code such as USD or EUR');
  if (currency) search.currency = currency;
  for (const [name, key] of [
    ['amountMin', 'amountGte'],
    ['amountMax', 'amountLte'],
  ] as const) {
    const value = filters[name]?.trim() ?? '';
    if (value) search[key] = minorUnitsOf(value, currency, name);
  }
  return search;
}

/** Search text that is neither a payment id nor an e-mail address is an order number. */
function orderNoOf(q: string): string {
  const text = q.trim();
  return /^pt_\d{19}$/.test(text) || text.includes('@') ? '' : text;
}

/** A YYYY-MM-DD filter as the first or last instant of that UTC day. */
export function dayBound(value: string | undefined, name: string, endOfDay: boolean): string | undefined {
  if (!value) return undefined;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value)))
    throw refuse(name, `${name} must be a date (YYYY-MM-DD)`);
  return `${value}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z`;
}

/** The list's filters (the page's query) as the payment service's query and search; the export uses the same. */
export function paymentQuery(filters: Record<string, string>, limit: number) {
  const listQuery = validated<ListPaymentsQuery>(
    ListPaymentsQuery,
    {
      limit,
      ...given({
        customerId: filters.customer,
        orderNo: filters.orderNo || orderNoOf(filters.q ?? ''),
        'created[gte]': dayBound(filters.from, 'from', false),
        'created[lte]': dayBound(filters.to, 'to', true),
      }),
    },
    'querystring',
  );
  return { listQuery, search: searchOf(filters) };
}
