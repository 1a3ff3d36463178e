/**
 * Disputes (docs/disputes.md): read, evidence staged and submitted, accepted; the sandbox's
 * dispute cards and outcomes. The money and events of each step are lifecycle.ts's. Every
 * function takes the merchant and mode it acts for, so the API and the dashboard share them.
 */
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { EventService, RecordedEvent } from '../events/service.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { createdBounds } from '../core/common-schemas.js';
import type { Page } from '../core/page.js';
import { DomainError, notFound } from '../core/errors.js';
import type { JobRunner } from '../jobs/runner.js';
import { jobKinds as paymentJobKinds } from '../payments/job-kinds.js';
import { selectPaymentById } from '../payments/queries.js';
import type { ProcessorRegistry } from '../processor-accounts/connectors.js';
import { isoTimestamp } from '../time.js';
import { createDisputeLifecycle, toDispute } from './lifecycle.js';
import { applyDisputeNotice, type DisputeNotice } from './notices.js';
import { sendResponse } from './responses.js';
import * as queries from './queries.js';
import {
  evidenceFileFields,
  evidenceTextFields,
  evidenceTextLimit,
  type Dispute,
  type Evidence,
  type EvidenceFileField,
  type EvidenceInput,
  type ListDisputesQuery,
  type UpdateDisputeBody,
} from './schemas.js';
import { disputeStates, type DisputeStatus } from './states.js';

type MerchantScope = Pick<MerchantContext, 'merchantId' | 'mode'>;

/** A file the dashboard's form uploads, stored in the evidence's transaction as the file of its field. */
interface Upload {
  field: EvidenceFileField;
  store: (tx: Queryable) => Promise<string>;
}

export const disputeJobKinds = { sandboxOutcome: 'dispute.sandbox_outcome' } as const;

/** docs/disputes.md, Sandbox: words in the submitted evidence that decide the sandbox's outcome. */
const winningWord = 'winning_evidence';
const losingWord = 'losing_evidence';

export interface DisputeServiceDeps {
  db: Db;
  clock: Clock;
  events: EventService;
  jobs: JobRunner;
  processors: ProcessorRegistry;
  /** TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS: how long after submission the sandbox decides. */
  followUpDelayMs: number;
}

export function createDisputeService(deps: DisputeServiceDeps) {
  const { db, clock, events, jobs, processors, followUpDelayMs } = deps;
  const lifecycle = createDisputeLifecycle({ events, jobs });

  async function inTransaction<T>(work: (tx: Queryable, recorded: RecordedEvent[]) => Promise<T>): Promise<T> {
    const recorded: RecordedEvent[] = [];
    const result = await db.transaction((tx) => work(tx, recorded));
    events.published(recorded);
    return result;
  }

  async function view(source: Queryable, rows: queries.DisputeRow[]): Promise<Dispute[]> {
    const entries = await queries.selectEntriesOf(
      source,
      rows.map((row) => row.id),
    );
    const now = clock.now();
    return rows.map((row) => toDispute(row, entries, now));
  }

  async function load(source: Queryable, merchant: MerchantScope, id: string): Promise<queries.DisputeRow> {
    const row = await queries.selectDispute(source, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('dispute', id);
    return row;
  }

  /** 409 unless the dispute still takes a response (docs/disputes.md, Evidence). */
  function requireOpen(row: queries.DisputeRow, now: Date): void {
    if (!disputeStates.canStart('stage', row.status)) {
      throw new DomainError(
        'dispute_not_open',
        `The dispute takes no response because its status is ${row.status}; it must be needs_response or warning_needs_response`,
        { param: 'id', status: row.status },
      );
    }
    if (row.due_by.getTime() < now.getTime()) {
      throw new DomainError(
        'dispute_not_open',
        `The dispute takes no response after its dueBy, ${isoTimestamp(row.due_by)}`,
        { param: 'id', status: row.status, dueBy: isoTimestamp(row.due_by) },
      );
    }
  }

  /** Another request changed the dispute between its read and its update. */
  async function refuseChanged(tx: Queryable, merchant: MerchantScope, id: string, now: Date): Promise<never> {
    requireOpen(await load(tx, merchant, id), now);
    throw new DomainError('dispute_not_open', 'The dispute changed meanwhile; read it again', { param: 'id' });
  }

  /** The staged evidence with `input` applied ("" clears a field), checked before anything is written. */
  async function merged(tx: Queryable, row: queries.DisputeRow, input: EvidenceInput): Promise<Evidence> {
    const evidence: Evidence = { ...row.evidence };
    for (const [field, value] of Object.entries(input) as Array<[keyof Evidence, string | undefined]>) {
      if (value !== undefined) evidence[field] = value === '' ? null : value;
    }
    const text = evidenceTextFields.reduce((sum, field) => sum + (evidence[field]?.length ?? 0), 0);
    if (text > evidenceTextLimit) {
      throw new DomainError(
        'invalid_request',
        `evidence text fields may hold at most ${evidenceTextLimit} characters in all; these hold ${text}`,
        { param: 'evidence', rule: 'max_total_text', limit: evidenceTextLimit },
      );
    }
    const named = evidenceFileFields.filter((field) => input[field] !== undefined && input[field] !== '');
    const own = await queries.selectOwnFileIds(
      tx,
      row.merchant_id,
      row.mode,
      named.map((field) => input[field]!),
    );
    for (const field of named) {
      if (!own.has(input[field]!)) {
        throw new DomainError('resource_missing', `No such file: ${input[field]}`, { param: `evidence.${field}` });
      }
    }
    return evidence;
  }

  /** Evidence staged, and with `submit` the dispute under review; undefined when it changed meanwhile. */
  async function submitIn(
    tx: Queryable,
    recorded: RecordedEvent[],
    current: queries.DisputeRow,
    evidence: Evidence | undefined,
    submit: boolean,
    now: Date,
  ): Promise<queries.DisputeRow | undefined> {
    const move = !submit
      ? disputeStates.transition('stage')
      : current.stage === 'inquiry'
        ? disputeStates.transition('submitInquiry', 'warning_under_review')
        : disputeStates.transition('submit', 'under_review');
    const updated = await queries.changeDispute(tx, current.id, move, { evidence, submitted: submit }, now);
    if (updated) await lifecycle.record(tx, recorded, 'dispute.updated', updated, now);
    return updated;
  }

  /** A chargeback accepted, an inquiry closed; undefined when it changed meanwhile. */
  async function acceptIn(
    tx: Queryable,
    recorded: RecordedEvent[],
    current: queries.DisputeRow,
    now: Date,
  ): Promise<queries.DisputeRow | undefined> {
    if (current.stage === 'inquiry') return lifecycle.close(tx, recorded, current, 'warning_closed', now);
    const updated = await queries.changeDispute(
      tx,
      current.id,
      disputeStates.transition('accept', 'accepted'),
      {},
      now,
    );
    if (updated) await lifecycle.record(tx, recorded, 'dispute.closed', updated, now);
    return updated;
  }

  /** The evidence given, with each upload stored in `tx` as the file of its field. */
  async function withUploads(
    tx: Queryable,
    given: EvidenceInput | undefined,
    uploads: readonly Upload[],
  ): Promise<EvidenceInput> {
    const evidence: EvidenceInput = { ...given };
    for (const upload of uploads) evidence[upload.field] = await upload.store(tx);
    return evidence;
  }

  /** Sandbox disputes, and live evidence only staged: all in one transaction. */
  function submitLocally(
    merchant: MerchantScope,
    id: string,
    input: UpdateDisputeBody,
    uploads: readonly Upload[],
  ): Promise<queries.DisputeRow> {
    return inTransaction(async (tx, recorded) => {
      const now = clock.now();
      const current = await load(tx, merchant, id);
      requireOpen(current, now);
      const evidence = await merged(tx, current, await withUploads(tx, input.evidence, uploads));
      if (current.response_sending !== null) refuseWhileSending(current, evidence);
      const updated = await submitIn(tx, recorded, current, evidence, input.submit === true, now);
      if (!updated) return refuseChanged(tx, merchant, id, now);
      if (input.submit && updated.processor_account_id === null) {
        await jobs.schedule(tx, disputeJobKinds.sandboxOutcome, updated.id, new Date(now.getTime() + followUpDelayMs));
      }
      return updated;
    });
  }

  /** While a live response is being sent, its evidence stays as sent, and no other response starts. */
  function refuseWhileSending(current: queries.DisputeRow, evidence: Evidence, kind?: 'submit' | 'accept'): void {
    const same = JSON.stringify(evidence) === JSON.stringify(current.evidence);
    if (current.response_sending === kind && same) return;
    throw new DomainError(
      'dispute_not_open',
      `The dispute's ${current.response_sending === 'accept' ? 'acceptance' : 'submission'} is being sent to the processor: send that same request again before anything else`,
      { param: 'id', status: current.status, sending: current.response_sending },
    );
  }

  /**
   * A live dispute's submission or acceptance (docs/disputes.md, Live; decision 0044): marked as
   * sending, sent to the processor outside any transaction, then recorded. A failure leaves the
   * mark and the submission count as they were, so the same request sends again with the same key.
   */
  async function respondLive(
    merchant: MerchantScope,
    id: string,
    kind: 'submit' | 'accept',
    input: UpdateDisputeBody,
    uploads: readonly Upload[] = [],
  ): Promise<queries.DisputeRow> {
    const marked = await inTransaction(async (tx) => {
      const now = clock.now();
      const current = await load(tx, merchant, id);
      requireOpen(current, now);
      const evidence =
        kind === 'submit'
          ? await merged(tx, current, await withUploads(tx, input.evidence, uploads))
          : current.evidence;
      if (current.response_sending !== null) refuseWhileSending(current, evidence, kind);
      const row = await queries.markSending(tx, id, kind, evidence, [...disputeStates.transition('stage').from], now);
      return row ?? refuseChanged(tx, merchant, id, now);
    });
    try {
      await sendResponse({ db, processors }, marked, kind);
    } catch (caught) {
      // Evidence the processor cannot take was not sent: the merchant may change it.
      if (caught instanceof DomainError && caught.code === 'invalid_request')
        await queries.finishSending(db, id, false);
      throw caught;
    }
    return inTransaction(async (tx, recorded) => {
      const now = clock.now();
      const current = (await queries.selectDisputeById(tx, id))!;
      const done =
        kind === 'submit'
          ? await submitIn(tx, recorded, current, undefined, true, now)
          : await acceptIn(tx, recorded, current, now);
      // Undefined: a notification moved the dispute first; the processor took the response all the same.
      return (await queries.finishSending(tx, id, done === undefined && kind === 'submit'))!;
    });
  }

  /** The sandbox decides a submitted dispute by the words of its evidence. */
  async function sandboxOutcome(disputeId: string): Promise<void> {
    const row = await queries.selectDisputeById(db, disputeId);
    if (!row || row.processor_account_id !== null) return;
    const text = evidenceTextFields.map((field) => row.evidence[field] ?? '').join('\n');
    const won = text.includes(winningWord);
    if (!won && !text.includes(losingWord)) return;
    await inTransaction(async (tx, recorded) => {
      const status = row.stage === 'inquiry' ? 'warning_closed' : won ? 'won' : 'lost';
      if (row.status === 'warning_under_review' || row.status === 'under_review') {
        await lifecycle.close(tx, recorded, row, status, clock.now());
      }
    });
  }

  /** A sandbox dispute card's payment: its disputes open (docs/disputes.md, Sandbox). */
  async function sandboxDisputes(paymentId: string): Promise<void> {
    const payment = await selectPaymentById(db, paymentId);
    if (!payment || payment.status !== 'succeeded' || payment.processor_reference === null) return;
    if (payment.dispute_ids.length > 0) return;
    const outcome = await (await processors.of(payment)).resolveFollowUp(payment.processor_reference, 'dispute');
    if (outcome.kind !== 'disputed') return;
    await inTransaction(async (tx, recorded) => {
      const now = clock.now();
      for (const dispute of outcome.disputes) {
        await lifecycle.open(tx, recorded, { paymentId, amount: null, ...dispute }, { withdrawNow: true, now });
      }
    });
  }

  jobs.register(disputeJobKinds.sandboxOutcome, sandboxOutcome);
  jobs.register(paymentJobKinds.sandboxDispute, sandboxDisputes);

  return {
    lifecycle,
    inTransaction,

    /** A live processor's dispute notification (docs/disputes.md, Live), in one transaction. */
    applyNotice(accountId: string, notice: DisputeNotice): Promise<'applied' | 'ignored'> {
      return inTransaction((tx, recorded) => applyDisputeNotice({ lifecycle, clock }, tx, recorded, accountId, notice));
    },

    async retrieve(merchant: MerchantScope, id: string): Promise<Dispute> {
      const [dispute] = await view(db, [await load(db, merchant, id)]);
      return dispute!;
    },

    async list(merchant: MerchantScope, query: ListDisputesQuery): Promise<Page<Dispute>> {
      const { rows, hasMore } = await queries.selectDisputePage(
        db,
        merchant.merchantId,
        merchant.mode,
        { paymentId: query.paymentId, status: query.status, ...createdBounds(query) },
        query,
      );
      return { data: await view(db, rows), hasMore };
    },

    /** Soonest dueBy first, at most `limit` (the dashboard's list, docs/disputes.md#dashboard). */
    async listByDueBy(
      merchant: MerchantScope,
      query: { status?: DisputeStatus; limit: number },
    ): Promise<Page<Dispute>> {
      const rows = await queries.selectDisputesByDueBy(
        db,
        merchant.merchantId,
        merchant.mode,
        query.status,
        query.limit,
      );
      return { data: await view(db, rows.slice(0, query.limit)), hasMore: rows.length > query.limit };
    },

    /**
     * Stages evidence; with `submit: true` sends it (docs/disputes.md, Evidence). `uploads` store
     * files in the same transaction as the evidence (the dashboard's form, docs/disputes.md#dashboard),
     * each as the evidence of its field: a refusal stores none of them.
     */
    async update(
      merchant: MerchantScope,
      id: string,
      input: UpdateDisputeBody,
      uploads: readonly Upload[] = [],
    ): Promise<Dispute> {
      const live = input.submit === true && (await load(db, merchant, id)).processor_account_id !== null;
      const row = live
        ? await respondLive(merchant, id, 'submit', input, uploads)
        : await submitLocally(merchant, id, input, uploads);
      const [dispute] = await view(db, [row]);
      return dispute!;
    },

    /** The merchant gives up: a chargeback is accepted (its money stays withdrawn), an inquiry closed. */
    async accept(merchant: MerchantScope, id: string): Promise<Dispute> {
      const live = (await load(db, merchant, id)).processor_account_id !== null;
      const row = live
        ? await respondLive(merchant, id, 'accept', {})
        : await inTransaction(async (tx, recorded) => {
            const now = clock.now();
            const current = await load(tx, merchant, id);
            requireOpen(current, now);
            return (await acceptIn(tx, recorded, current, now)) ?? refuseChanged(tx, merchant, id, now);
          });
      const [dispute] = await view(db, [row]);
      return dispute!;
    },
  };
}

export type DisputeService = ReturnType<typeof createDisputeService>;
