/**
 * The operator's settings of a merchant's money (docs/balances.md): its fee schedule, when funds
 * become available, its payout schedule and its bank account, checked before anything is written.
 */

import type { Queryable } from '../db/db.js';
import { invalidField } from '../core/errors.js';
import { normalizeCurrency } from '../money.js';
import type { Vault } from '../vault/vault.js';
import { bankAccountContext } from '../vault/secrets-at-rest.js';
import { ibanChecksumHolds, routingChecksumHolds } from './bank-account.js';
import * as finance from './finance-queries.js';
import type { FinanceSettings, FinanceSettingsInput } from './settings-schemas.js';

export function toFinanceSettings(row: finance.FinanceRow, accounts: finance.BankAccountRow[]): FinanceSettings {
  return {
    fees: { percentBasisPoints: row.fee_percent_basis_points, fixed: row.fee_fixed },
    availabilityDays: row.availability_days,
    payoutSchedule: {
      interval: row.payout_interval,
      weeklyAnchor: (row.payout_weekly_anchor as FinanceSettings['payoutSchedule']['weeklyAnchor']) ?? null,
      monthlyAnchor: row.payout_monthly_anchor,
    },
    bankAccounts: accounts.map((account) => ({
      holderName: account.holder_name,
      accountNumberLast4: account.account_last4,
      routingNumber: account.routing_number,
      ibanLast4: account.iban_last4,
      currency: account.currency,
    })),
  };
}

export function hasFinanceChanges(input: FinanceSettingsInput): boolean {
  return (
    input.fees !== undefined ||
    input.availabilityDays !== undefined ||
    input.payoutSchedule !== undefined ||
    input.bankAccount !== undefined
  );
}

/**
 * The settings after `input` and the bank account it adds or replaces (the one of its currency),
 * or a 400 naming the field and the rule; nothing is written here.
 */
export function applyFinanceChanges(
  current: finance.FinanceRow,
  input: FinanceSettingsInput,
  vault: Vault,
): { next: finance.FinanceRow; bankAccount?: finance.BankAccountRow } {
  const next: finance.FinanceRow = { ...current };
  if (input.fees?.percentBasisPoints !== undefined) next.fee_percent_basis_points = input.fees.percentBasisPoints;
  if (input.fees?.fixed !== undefined) {
    const fixed: Record<string, number> = {};
    for (const [code, amount] of Object.entries(input.fees.fixed)) {
      const currency = normalizeCurrency(code);
      if (currency === undefined) {
        throw invalidField(
          `fees.fixed.${code}`,
          `fees.fixed keys must be ISO 4217 currency codes; ${code} is not`,
          'currency',
        );
      }
      fixed[currency] = amount;
    }
    next.fee_fixed = fixed;
  }
  if (input.availabilityDays !== undefined) next.availability_days = input.availabilityDays;
  if (input.payoutSchedule !== undefined) {
    const { interval, weeklyAnchor, monthlyAnchor } = input.payoutSchedule;
    if (interval === 'weekly' && weeklyAnchor === undefined) {
      throw invalidField(
        'payoutSchedule.weeklyAnchor',
        'payoutSchedule.weeklyAnchor is required with interval weekly',
        'required',
      );
    }
    if (interval === 'monthly' && monthlyAnchor === undefined) {
      throw invalidField(
        'payoutSchedule.monthlyAnchor',
        'payoutSchedule.monthlyAnchor is required with interval monthly',
        'required',
      );
    }
    if (interval !== 'weekly' && weeklyAnchor !== undefined) {
      throw invalidField(
        'payoutSchedule.weeklyAnchor',
        'payoutSchedule.weeklyAnchor is only for interval weekly',
        'interval',
      );
    }
    if (interval !== 'monthly' && monthlyAnchor !== undefined) {
      throw invalidField(
        'payoutSchedule.monthlyAnchor',
        'payoutSchedule.monthlyAnchor is only for interval monthly',
        'interval',
      );
    }
    next.payout_interval = interval;
    next.payout_weekly_anchor = weeklyAnchor ?? null;
    next.payout_monthly_anchor = monthlyAnchor ?? null;
  }
  if (input.bankAccount !== undefined) {
    const account = input.bankAccount;
    const currency = normalizeCurrency(account.currency);
    if (currency === undefined) {
      throw invalidField('bankAccount.currency', 'bankAccount.currency must be an ISO 4217 currency code', 'currency');
    }
    const iban = account.iban === undefined ? undefined : account.iban.replace(/\s+/g, '').toUpperCase();
    if (iban !== undefined && !ibanChecksumHolds(iban)) {
      throw invalidField(
        'bankAccount.iban',
        'bankAccount.iban is not a valid IBAN: two letters, two check digits and up to 30 letters or digits whose mod-97 checksum is 1',
        'iban_checksum',
      );
    }
    if (account.routingNumber !== undefined && !routingChecksumHolds(account.routingNumber)) {
      throw invalidField(
        'bankAccount.routingNumber',
        'bankAccount.routingNumber is not a valid US routing number: its ABA checksum does not hold',
        'routing_checksum',
      );
    }
    if (currency === 'USD' && iban === undefined && account.routingNumber === undefined) {
      throw invalidField(
        'bankAccount.routingNumber',
        'bankAccount.routingNumber is required for a USD account without iban',
        'required',
      );
    }
    const context = bankAccountContext(current.merchant_id);
    return {
      next,
      bankAccount: {
        merchant_id: current.merchant_id,
        currency,
        holder_name: account.holderName,
        account_number_encrypted: vault.encrypt(account.accountNumber, context),
        account_last4: account.accountNumber.slice(-4),
        routing_number: account.routingNumber ?? null,
        iban_encrypted: iban === undefined ? null : vault.encrypt(iban, context),
        iban_last4: iban === undefined ? null : iban.slice(-4),
      },
    };
  }
  return { next };
}

export function createFinanceSettings({ vault }: { vault: Vault }) {
  return {
    async view(db: Queryable, merchantId: string): Promise<FinanceSettings> {
      return toFinanceSettings(
        await finance.selectFinance(db, merchantId),
        await finance.selectBankAccounts(db, merchantId),
      );
    },

    async viewAll(db: Queryable): Promise<Map<string, FinanceSettings>> {
      const [rows, accounts] = [await finance.selectAllFinance(db), await finance.selectAllBankAccounts(db)];
      const accountsOf = (merchantId: string) => accounts.filter((account) => account.merchant_id === merchantId);
      const views = new Map(rows.map((row) => [row.merchant_id, toFinanceSettings(row, accountsOf(row.merchant_id))]));
      // A merchant with an account but no settings row of its own (none is made without one, but a
      // row is not required by the table).
      for (const account of accounts) {
        if (!views.has(account.merchant_id)) {
          views.set(
            account.merchant_id,
            toFinanceSettings(finance.defaultFinance(account.merchant_id), accountsOf(account.merchant_id)),
          );
        }
      }
      return views;
    },

    defaults(merchantId: string): FinanceSettings {
      return toFinanceSettings(finance.defaultFinance(merchantId), []);
    },

    /** Checks `input` (400 before anything is written), then saves the settings in `tx`. */
    async change(tx: Queryable, merchantId: string, input: FinanceSettingsInput, now: Date): Promise<FinanceSettings> {
      const { next, bankAccount } = applyFinanceChanges(await finance.lockFinance(tx, merchantId, now), input, vault);
      await finance.saveFinance(tx, next, now);
      if (bankAccount) await finance.saveBankAccount(tx, bankAccount, now);
      return toFinanceSettings(next, await finance.selectBankAccounts(tx, merchantId));
    },
  };
}

export type FinanceSettingsService = ReturnType<typeof createFinanceSettings>;
