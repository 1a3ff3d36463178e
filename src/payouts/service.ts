/**
 * Payouts (docs/balances.md, Payouts): money sent from the available balance to the merchant's
 * bank account, by hand (POST /payouts/create) or by the payout schedule. A payout and its
 * `payout` balance transaction are written in one transaction, under the merchant's finance lock,
 * so two processes never spend the same balance; an automatic payout is also unique per merchant,
 * currency and day in the database.
 */

import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { failureLevel } from '../db/errors.js';
import type { EventType } from '../events/schemas.js';
import type { EventService, RecordedEvent } from '../events/service.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { createdBounds } from '../core/common-schemas.js';
import type { Page } from '../core/page.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { newId } from '../ids.js';
import type { JobRunner } from '../jobs/runner.js';
import * as finance from '../ledger/finance-queries.js';
import { writeEntry } from '../ledger/service.js';
import { normalizeCurrency, parseAmount } from '../money.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import { payoutDue, utcDay } from './schedule.js';
import { reconciliationBatches } from './reconciliation.js';
import type { CreatePayoutBody, ListPayoutsQuery, Payout, ReconciliationRow } from './schemas.js';
import { payoutStates, type PayoutStatus } from './states.js';

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

export const payoutJobKinds = { send: 'payout.send', settle: 'payout.settle' } as const;

/** A sandbox bank account whose number ends so fails every payout (docs/balances.md). */
const failingAccountLast4 = '0002';

export function toPayout(row: queries.PayoutRow): Payout {
  return {
    id: row.id,
    amount: BigInt(row.amount).toString(),
    currency: row.currency,
    status: row.status,
    automatic: row.automatic,
    bankAccountLast4: row.bank_account_last4,
    failureCode: row.failure_code,
    failureMessage: row.failure_message,
    arrivalDate: row.arrival_date === null ? null : isoTimestamp(row.arrival_date),
    created: isoTimestamp(row.created_at),
  };
}

function notCancelable(status: PayoutStatus): DomainError {
  return new DomainError(
    'payout_not_cancelable',
    `The payout cannot be canceled because its status is ${status}; only a pending payout can be (the bank has it once it is in_transit)`,
    { param: 'id', status },
  );
}

/** Nothing to pay out: the transaction is rolled back with its claims. */
class NothingToPay extends Error {}

export interface PayoutServiceDeps {
  db: Db;
  clock: Clock;
  logger: FastifyBaseLogger;
  events: EventService;
  jobs: JobRunner;
  /** TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: an in-transit payout is paid (or fails) this long after. */
  followUpDelayMs: number;
}

export function createPayoutService(deps: PayoutServiceDeps) {
  const { db, clock, logger, events, jobs, followUpDelayMs } = deps;

  async function inTransaction<T>(work: (tx: Queryable, recorded: RecordedEvent[]) => Promise<T>): Promise<T> {
    const recorded: RecordedEvent[] = [];
    const result = await db.transaction((tx) => work(tx, recorded));
    events.published(recorded);
    return result;
  }

  async function record(tx: Queryable, recorded: RecordedEvent[], type: EventType, row: queries.PayoutRow) {
    const owner = { merchantId: row.merchant_id, mode: row.mode as MerchantScope['mode'] };
    recorded.push(await events.record(tx, owner, type, toPayout(row)));
  }

  /**
   * The payout, its entry and its payout.created event. It waits `pending`, cancelable, until the
   * bank rail takes it: the sandbox's rail does at once, in the `payout.send` job scheduled now
   * (docs/decisions/0050-ledger-additions.md); it is paid (or fails) by `arrivalDate`.
   */
  async function open(
    tx: Queryable,
    recorded: RecordedEvent[],
    account: finance.BankAccountRow,
    payout: { id: string; merchant: MerchantScope; amount: bigint; currency: string; scheduledFor: string | null },
    now: Date,
  ): Promise<queries.PayoutRow | undefined> {
    const arrival = new Date(now.getTime() + followUpDelayMs);
    const row: queries.PayoutRow = {
      id: payout.id,
      merchant_id: payout.merchant.merchantId,
      mode: payout.merchant.mode,
      amount: payout.amount.toString(),
      currency: payout.currency,
      status: 'pending',
      automatic: payout.scheduledFor !== null,
      scheduled_for: payout.scheduledFor,
      bank_account_last4: account.account_last4,
      failure_code: null,
      failure_message: null,
      arrival_date: arrival,
      created_at: now,
      updated_at: now,
    };
    if (!(await queries.insertPayout(tx, row))) return undefined;
    await writeEntry(tx, {
      merchantId: row.merchant_id,
      mode: row.mode,
      type: 'payout',
      source: row.id,
      amount: -payout.amount,
      fees: [],
      currency: row.currency,
      availableOn: now,
      reportingCategory: 'payout',
      // An automatic payout's entry closes the group it settles (which then sums to zero); a
      // manual payout's is settled by the next automatic payout, like any other entry.
      payoutId: row.automatic ? row.id : null,
      created: now,
    });
    await record(tx, recorded, 'payout.created', row);
    await jobs.schedule(tx, payoutJobKinds.send, row.id, now);
    return row;
  }

  /**
   * One automatic payout of the merchant in `currency`, to its account in that currency, if due and
   * positive (docs/balances.md, Bank accounts: a currency without an account is not paid out).
   */
  async function payOutScheduled(
    merchantId: string,
    mode: MerchantScope['mode'],
    currency: string,
    now: Date,
  ): Promise<void> {
    await inTransaction(async (tx, recorded) => {
      const settings = await finance.lockFinance(tx, merchantId, now);
      const account = (await finance.selectBankAccounts(tx, merchantId)).find((row) => row.currency === currency);
      if (!account || !payoutDue(settings, now)) throw new NothingToPay();
      const day = utcDay(now);
      if (await queries.automaticPayoutOf(tx, merchantId, mode, currency, day)) throw new NothingToPay();
      const id = newId('po');
      const nets = await queries.claimUnsettled(tx, merchantId, mode, currency, id, now);
      const amount = nets.reduce((sum, net) => sum + net, 0n);
      // docs/balances.md: a negative (or empty) available balance is carried, never paid out.
      if (amount <= 0n) throw new NothingToPay();
      const made = await open(
        tx,
        recorded,
        account,
        { id, merchant: { merchantId, mode }, amount, currency, scheduledFor: day },
        now,
      );
      if (!made) throw new NothingToPay();
    }).catch((err: unknown) => {
      if (!(err instanceof NothingToPay)) throw err;
    });
  }

  /** The sandbox's bank rail takes a pending payout; one canceled first stays canceled. */
  async function sendToBank(payoutId: string): Promise<void> {
    await inTransaction(async (tx) => {
      const now = clock.now();
      const sent = await queries.changePayout(tx, payoutId, payoutStates.transition('send', 'in_transit'), {}, now);
      if (!sent) return;
      const arrival = sent.arrival_date ?? now;
      await jobs.schedule(tx, payoutJobKinds.settle, sent.id, arrival > now ? arrival : now);
    });
  }

  async function settle(payoutId: string): Promise<void> {
    const row = await queries.selectPayoutById(db, payoutId);
    if (!row || !payoutStates.canStart('settle', row.status)) return;
    const failed = row.bank_account_last4 === failingAccountLast4;
    await inTransaction(async (tx, recorded) => {
      const now = clock.now();
      const status: PayoutStatus = failed ? 'failed' : 'paid';
      const updated = await queries.changePayout(
        tx,
        row.id,
        payoutStates.transition('settle', status),
        failed ? { failure_code: 'account_closed', failure_message: 'The bank account has been closed' } : {},
        now,
      );
      // Another worker settled it first.
      if (!updated) return;
      if (failed) {
        await writeEntry(tx, {
          merchantId: row.merchant_id,
          mode: row.mode,
          type: 'payout_failure',
          source: row.id,
          amount: BigInt(row.amount),
          fees: [],
          currency: row.currency,
          availableOn: now,
          reportingCategory: 'payout_reversal',
          created: now,
        });
      }
      await record(tx, recorded, failed ? 'payout.failed' : 'payout.paid', updated);
    });
  }

  jobs.register(payoutJobKinds.send, sendToBank);
  jobs.register(payoutJobKinds.settle, settle);

  async function load(merchant: MerchantScope, id: string): Promise<queries.PayoutRow> {
    const row = await queries.selectPayout(db, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('payout', id);
    return row;
  }

  return {
    /** docs/balances.md: a payout of `amount` from the available balance, to the bank account. */
    async create(merchant: MerchantContext, input: CreatePayoutBody): Promise<Payout> {
      const amount = parseAmount(input.amount);
      if (amount === undefined || amount === 0n) {
        throw invalidField(
          'amount',
          'amount must be a string of digits (minor units) or a whole number, from 1 to 12 digits and more than 0',
        );
      }
      const currency = normalizeCurrency(input.currency);
      if (currency === undefined)
        throw invalidField('currency', 'currency must be an ISO 4217 currency code', 'currency');
      const row = await inTransaction(async (tx, recorded) => {
        const now = clock.now();
        await finance.lockFinance(tx, merchant.merchantId, now);
        const accounts = await finance.selectBankAccounts(tx, merchant.merchantId);
        if (accounts.length === 0) {
          throw new DomainError(
            'bank_account_missing',
            'The merchant has no bank account to pay out to: ask your account manager to set one (the operator API: POST /admin/v1/merchants/{id}/update with bankAccount)',
            { param: 'currency' },
          );
        }
        const { available, entries } = await queries.selectAvailable(
          tx,
          merchant.merchantId,
          merchant.mode,
          currency,
          now,
        );
        if (entries === 0) {
          throw new DomainError('invalid_request', `There is no balance in ${currency} to pay out`, {
            param: 'currency',
            rule: 'no_balance',
          });
        }
        const account = accounts.find((row) => row.currency === currency);
        if (!account) {
          throw new DomainError(
            'bank_account_missing',
            `There is no bank account in ${currency} to pay out to (the merchant's accounts are in ${accounts.map((row) => row.currency).join(', ')}): the Owner adds one in the dashboard's payout settings, or the operator with POST /admin/v1/merchants/{id}/update and bankAccount.currency ${currency}`,
            { param: 'currency', rule: 'bank_account_currency' },
          );
        }
        if (amount > available) {
          const shown = available < 0n ? 0n : available;
          throw new DomainError(
            'amount_too_large',
            `amount ${amount} is more than the available balance: ${shown} (${currency} minor units)`,
            { param: 'amount', available: shown.toString(), currency },
          );
        }
        const made = await open(
          tx,
          recorded,
          account,
          { id: newId('po'), merchant, amount, currency, scheduledFor: null },
          now,
        );
        if (!made) throw new Error('a manual payout conflicted with another');
        return made;
      });
      return toPayout(row);
    },

    /**
     * docs/balances.md, Canceling a payout: a payout the bank rail has not taken yet (`pending`)
     * is canceled, and its `payout_cancel` entry returns the money, in one transaction. Once taken,
     * 409 `payout_not_cancelable` naming its status.
     */
    async cancel(merchant: MerchantContext, id: string): Promise<Payout> {
      const current = await load(merchant, id);
      const row = await inTransaction(async (tx, recorded) => {
        const now = clock.now();
        // The schedule claims entries under this lock; an automatic payout's are given back under it.
        await finance.lockFinance(tx, merchant.merchantId, now);
        const canceled = await queries.changePayout(tx, id, payoutStates.transition('cancel', 'canceled'), {}, now);
        if (!canceled) {
          const status = (await queries.selectPayoutById(tx, id))?.status ?? current.status;
          throw notCancelable(status);
        }
        // An automatic payout's entries wait for the next one; its own entry and this one sum to zero.
        if (canceled.automatic) await queries.releaseClaims(tx, id);
        await writeEntry(tx, {
          merchantId: canceled.merchant_id,
          mode: canceled.mode,
          type: 'payout_cancel',
          source: canceled.id,
          amount: BigInt(canceled.amount),
          fees: [],
          currency: canceled.currency,
          availableOn: now,
          reportingCategory: 'payout_reversal',
          payoutId: canceled.automatic ? canceled.id : null,
          created: now,
        });
        await record(tx, recorded, 'payout.canceled', canceled);
        return canceled;
      });
      return toPayout(row);
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<Payout> {
      return toPayout(await load(merchant, id));
    },

    async list(merchant: MerchantContext, query: ListPayoutsQuery): Promise<Page<Payout>> {
      const { rows, hasMore } = await queries.selectPayoutPage(
        db,
        merchant.merchantId,
        merchant.mode,
        { status: query.status, ...createdBounds(query) },
        query,
      );
      return { data: rows.map(toPayout), hasMore };
    },

    /**
     * The payout and every entry it settles, in batches read as the caller consumes them, so that
     * a payout of any size is exported in constant memory. 404 before anything is read.
     */
    async reconciliation(
      merchant: MerchantContext,
      id: string,
    ): Promise<{ payout: Payout; batches: AsyncIterable<ReconciliationRow[]> }> {
      const payout = toPayout(await load(merchant, id));
      return { payout, batches: reconciliationBatches(db, id) };
    },

    /** The payout schedule: every merchant whose automatic payout is due today (the job runner calls it). */
    async runSchedule(): Promise<void> {
      const now = clock.now();
      for (const settings of await finance.selectScheduledMerchants(db)) {
        if (!payoutDue(settings, now)) continue;
        // One payout per currency with a bank account; a balance in another currency waits.
        for (const account of await finance.selectBankAccounts(db, settings.merchant_id)) {
          for (const mode of ['test', 'live'] as const) {
            await payOutScheduled(settings.merchant_id, mode, account.currency, now).catch((err: unknown) =>
              logger[failureLevel(err)]({ err, merchantId: settings.merchant_id }, 'automatic payout failed'),
            );
          }
        }
      }
    },
  };
}

export type PayoutService = ReturnType<typeof createPayoutService>;
