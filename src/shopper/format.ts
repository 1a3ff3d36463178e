/**
 * Amounts and dates for shoppers to read, in their language: the hosted checkout, invoice and
 * 3-D Secure pages and the card field's Pay button write them the same way.
 */
import { currencyExponent, formatAmount } from '../money.js';
import type { ShopperLocale } from './locales.js';

/** An amount for the shopper to read, in their language: 3150n USD → "$31.50" (en), "31,50 $" (fr). */
export function formatMoney(locale: ShopperLocale, amount: bigint, currency: string): string {
  const digits = currencyExponent(currency);
  const format = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  // A decimal string keeps every digit of a bigint (Intl.NumberFormat v3); a number could round.
  return format.format(formatAmount(amount, currency) as unknown as number);
}

/** A date for the shopper to read, in their language, as the day it is in UTC. */
export function formatDate(locale: ShopperLocale, date: Date): string {
  return new Intl.DateTimeFormat(locale, { timeZone: 'UTC', dateStyle: 'long' }).format(date);
}
