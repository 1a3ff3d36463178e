import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { isUniqueViolation } from '../db/errors.js';
import type { EventService, RecordedEvent } from '../events/service.js';
import type { EventType } from '../events/schemas.js';
import type { MerchantContext } from '../http/auth.js';
import { normalizeShipping } from '../http/common-schemas.js';
import type { Page } from '../http/envelope.js';
import { ApiError, invalidField, notFound } from '../http/errors.js';
import { isId, newId } from '../ids.js';
import type { JobRunner } from '../jobs/runner.js';
import { formatAmount, normalizeCurrency, parseAmount } from '../money.js';
import type { PaymentMethodForPayment, PaymentMethodService } from '../payment-methods/service.js';
import type {
  AuthorizeOutcome,
  AuthorizeRequest,
  CaptureOutcome,
  PaymentInitiator,
  Processor,
  ThreeDSecureState,
} from '../processor/processor.js';
import { isoTimestamp } from '../time.js';
import type { Vault } from '../vault/vault.js';
import * as queries from './queries.js';
import type {
  CancelPaymentBody,
  ConfirmPaymentBody,
  CreatePaymentBody,
  LineItemOut,
  ListPaymentsQuery,
  Payment,
  PaymentEventObject,
  UpdatePaymentBody,
} from './schemas.js';
import { displayStatusOf, startsFrom, type PaymentOperation, type PaymentStatus } from './states.js';
import type { ChallengeView } from './three-d-secure-page.js';

/** DESIGN §4: an uncaptured pre-authorization is canceled this long after it was authorized. */
export const preAuthorizationLifetimeMs = 7 * 24 * 60 * 60 * 1000;

/**
 * A payment claimed for an authorization and still without an answer this long after is taken to
 * be interrupted (its process died): far longer than any processor call may take.
 */
export const interruptedAuthorizationAfterMs = 5 * 60 * 1000;

/** The cancellationReason of a pre-authorization canceled because it was never captured. */
export const expiredCancellationReason = 'automatic';

export const jobKinds = {
  settle: 'payment.settle',
  reverse: 'payment.reverse',
  expirePreAuthorization: 'payment.expire_preauth',
  voidAuthorization: 'payment.void_authorization',
} as const;

export interface PaymentServiceDeps {
  db: Db;
  logger: FastifyBaseLogger;
  clock: Clock;
  vault: Vault;
  processor: Processor;
  paymentMethods: PaymentMethodService;
  events: EventService;
  jobs: JobRunner;
  /** The address customers' browsers use; known once the server listens. */
  publicUrl: () => string;
  /**
   * Refuses a notifyUrl that webhooks may not be sent to (the rules of an endpoint's url, DESIGN
   * §5: in production no loopback, private, link-local or metadata address), naming the field.
   */
  checkNotifyUrl?: (url: string) => Promise<void>;
}

/** What a payment's own columns say about how its card is used (DESIGN §3). */
type Usage = Pick<
  queries.PaymentRow,
  'amount' | 'customer_id' | 'payment_method_id' | 'setup_future_usage' | 'subsequent_initial_type' | 'details'
>;

export function initiatorOf(payment: Pick<Usage, 'setup_future_usage' | 'subsequent_initial_type'>): PaymentInitiator {
  if (payment.subsequent_initial_type !== null) return payment.subsequent_initial_type;
  return payment.setup_future_usage === 'on' ? 'first_storing' : 'one_off';
}

/** Another request or job changed the payment between our read and our conditional update. */
class StateConflict extends Error {
  constructor(readonly current: queries.PaymentRow | undefined) {
    super('The payment changed while it was being processed');
  }
}

const verbs: Record<PaymentOperation, string> = {
  update: 'updated',
  provideMethod: 'updated',
  confirm: 'confirmed',
  completeChallenge: 'authenticated',
  finishAuthorization: 'authorized',
  settle: 'settled',
  capture: 'captured',
  finishCapture: 'captured',
  cancel: 'canceled',
  expirePreAuthorization: 'canceled',
  reverse: 'reversed',
};

function invalidState(status: PaymentStatus, operation: PaymentOperation): ApiError {
  const allowed = startsFrom(operation).join(' or ');
  return new ApiError(
    'invalid_state',
    `The payment cannot be ${verbs[operation]} because its status is ${status}; it must be ${allowed}`,
    { param: 'id', status },
  );
}

/** The method of a payment past requires_payment_method, which always has one. */
function methodIdOf(row: Pick<queries.PaymentRow, 'id' | 'payment_method_id'>): string {
  if (row.payment_method_id === null) throw new Error(`Payment ${row.id} has no payment method`);
  return row.payment_method_id;
}

const paymentMethodRequired = () =>
  invalidField('paymentMethod', 'paymentMethod is required to confirm a payment', 'required');

function requireStatus(row: queries.PaymentRow, operation: PaymentOperation): void {
  if (!startsFrom(operation).includes(row.status)) throw invalidState(row.status, operation);
}

const duplicateOrder = (orderNo: string) =>
  new ApiError(
    'duplicate_order',
    `orderNo '${orderNo}' is already used by a payment that has not failed or been canceled`,
    { param: 'orderNo' },
  );

function parseAmountField(value: string | number): bigint {
  const amount = parseAmount(value);
  if (amount === undefined) {
    throw invalidField(
      'amount',
      'amount must be a string of digits (minor units) or a whole number, at most 12 digits',
    );
  }
  return amount;
}

function parseCurrencyField(code: string, param = 'currency'): string {
  const currency = normalizeCurrency(code);
  if (currency === undefined) throw invalidField(param, `${param} must be an ISO 4217 currency code`, 'currency');
  return currency;
}

type LineItemIn = NonNullable<CreatePaymentBody['lineItems']>[number];

function normalizeLineItems(items: LineItemIn[] | undefined): LineItemOut[] | null {
  if (items === undefined) return null;
  return items.map((item, index) => ({
    amount: item.amount ?? null,
    currency: item.currency === undefined ? null : parseCurrencyField(item.currency, `lineItems[${index}].currency`),
    description: item.description ?? null,
    images: item.images ?? null,
    name: item.name ?? null,
    quantity: item.quantity ?? null,
  }));
}

/** Request fields that are only echoed, as stored in payments.details. */
function detailsOf(input: Partial<CreatePaymentBody>, base: queries.PaymentDetails | null): queries.PaymentDetails {
  const keep = <T>(value: T | undefined, current: T | null | undefined): T | null =>
    value !== undefined ? value : (current ?? null);
  return {
    description: keep(input.description, base?.description),
    ip: keep(input.ip, base?.ip),
    confirm: base?.confirm ?? (input.confirm === true || input.confirm === 'true'),
    lineItems: input.lineItems !== undefined ? normalizeLineItems(input.lineItems) : (base?.lineItems ?? null),
    notifyUrl: keep(input.notifyUrl, base?.notifyUrl),
    receiptEmail: keep(input.receiptEmail, base?.receiptEmail),
    returnUrl: keep(input.returnUrl, base?.returnUrl),
    statementDescriptor: keep(input.statementDescriptor, base?.statementDescriptor),
    statementDescriptorSuffix: keep(input.statementDescriptorSuffix, base?.statementDescriptorSuffix),
    website: keep(input.website, base?.website),
    userAgent: keep(input.userAgent, base?.userAgent),
    shipping: input.shipping !== undefined ? normalizeShipping(input.shipping) : (base?.shipping ?? null),
    appScheme: keep(input.appScheme, base?.appScheme),
    openUserId: keep(input.openUserId, base?.openUserId),
    use3DRequested: input.use3D ?? base?.use3DRequested ?? false,
    automaticPaymentMethods: keep(input.automaticPaymentMethods, base?.automaticPaymentMethods),
    recurring:
      input.recurring !== undefined
        ? { initial: input.recurring.initial ?? null, relationPaymentId: input.recurring.relationPaymentId ?? null }
        : (base?.recurring ?? null),
    fromChannel: keep(input.fromChannel, base?.fromChannel),
  };
}

export function createPaymentService(deps: PaymentServiceDeps) {
  const { db, logger, clock, vault, processor, paymentMethods, events, jobs, publicUrl, checkNotifyUrl } = deps;

  async function requireAllowedNotifyUrl(input: { notifyUrl?: string | null }): Promise<void> {
    if (typeof input.notifyUrl === 'string') await checkNotifyUrl?.(input.notifyUrl);
  }
  const clientSecretKey = vault.deriveKey('client-secret');

  /** Derived, never stored: the same payment always has the same secret, and only this service can make it. */
  function clientSecretOf(paymentId: string): string {
    return `${paymentId}_secret_${createHmac('sha256', clientSecretKey).update(paymentId).digest('hex')}`;
  }

  function secretMatches(paymentId: string, given: string): boolean {
    const expected = Buffer.from(clientSecretOf(paymentId));
    const candidate = Buffer.from(given);
    return candidate.length === expected.length && timingSafeEqual(candidate, expected);
  }

  function challengeUrl(paymentId: string): string {
    return `${publicUrl()}/3ds/${paymentId}?secret=${encodeURIComponent(clientSecretOf(paymentId))}`;
  }

  function toPayment(row: queries.PaymentRow): Payment {
    const details = row.details;
    return {
      id: row.id,
      amount: BigInt(row.amount).toString(),
      currency: row.currency,
      confirmationMethod: row.confirmation_method,
      customerId: row.customer_id,
      paymentMethod: row.payment_method_id,
      description: details.description,
      ip: details.ip,
      confirm: details.confirm ? 'true' : 'false',
      lineItems: details.lineItems,
      notifyUrl: details.notifyUrl,
      orderNo: row.order_no,
      preAuth: row.pre_auth,
      receiptEmail: details.receiptEmail,
      returnUrl: details.returnUrl,
      setupFutureUsage: row.setup_future_usage,
      subsequentInitialType: row.subsequent_initial_type,
      statementDescriptor: details.statementDescriptor,
      statementDescriptorSuffix: details.statementDescriptorSuffix,
      website: details.website,
      userAgent: details.userAgent,
      shipping: details.shipping,
      appScheme: details.appScheme,
      openUserId: details.openUserId,
      fromChannel: details.fromChannel,
      automaticPaymentMethods: details.automaticPaymentMethods,
      recurring: details.recurring,
      paymentMethodTypes: ['card'],
      paymentMethodType: 'card',
      clientSecret: clientSecretOf(row.id),
      canceledAt: row.canceled_at === null ? null : isoTimestamp(row.canceled_at),
      cancellationReason: row.cancellation_reason,
      amountReceived: BigInt(row.amount_received).toString(),
      amountCapturable: BigInt(row.amount_capturable).toString(),
      created: isoTimestamp(row.created_at),
      riskInfo: row.risk_score === null ? null : { riskScore: row.risk_score, riskMessage: row.risk_message ?? '' },
      status: row.status,
      displayStatus: displayStatusOf(row.status),
      errorCode: row.error_code,
      errorMessage: row.error_message,
      invoiceId: row.invoice_id,
      use3D: row.use_3d,
      nextAction: row.status === 'requires_action' ? { type: 'redirect', redirectToUrl: challengeUrl(row.id) } : null,
    };
  }

  /** SPEC §2.5: a payment in a webhook body also carries actionStatus. */
  function toEventObject(row: queries.PaymentRow): PaymentEventObject {
    return { ...toPayment(row), actionStatus: null };
  }

  /**
   * Jobs and the hosted 3-D Secure page act without a key, on behalf of the payment's merchant.
   * The capability flags were checked when the payment was created and confirmed; what follows
   * only continues that confirmation, so they are not consulted again.
   */
  function ownerOf(row: queries.PaymentRow): MerchantContext {
    return {
      merchantId: row.merchant_id,
      mode: row.mode === 'live' ? 'live' : 'test',
      keyKind: 'private',
      tokenizationEnabled: true,
      mitEnabled: true,
    };
  }

  async function load(source: Queryable, merchant: MerchantContext, id: string): Promise<queries.PaymentRow> {
    const row = await queries.selectPayment(source, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('payment', id);
    return row;
  }

  /**
   * The payment method's own state against the payment (DESIGN §3): detached methods are
   * finished; a method belongs to at most one customer; CIT and MIT need the pair bound by an
   * earlier storing payment.
   */
  function checkMethod(usage: Usage, method: PaymentMethodForPayment): void {
    if (method.detachedAt !== null) {
      throw new ApiError('invalid_state', 'The payment method is detached and can no longer be used for payments', {
        param: 'paymentMethod',
        state: 'detached',
      });
    }
    if (method.customerId !== null && method.customerId !== usage.customer_id) {
      throw new ApiError(
        'payment_method_bound_elsewhere',
        usage.customer_id === null
          ? 'The payment method belongs to a customer; send that customerId with it'
          : 'The payment method is bound to another customer; create a new payment method for this customer',
        { param: 'paymentMethod' },
      );
    }
    const initiator = initiatorOf(usage);
    if ((initiator === 'cit' || initiator === 'mit') && method.storedAt === null) {
      throw new ApiError(
        'payment_method_not_bound',
        `A ${initiator.toUpperCase()} payment needs a customerId and paymentMethod bound by an earlier successful storing payment (setupFutureUsage=on)`,
        { param: 'paymentMethod' },
      );
    }
  }

  /**
   * Every rule a payment must meet before it may be authorized, checked when it is created,
   * updated and confirmed. Returns the payment method with its card, for the processor, or null
   * for a payment that has none yet (requires_payment_method).
   */
  async function checkRules(
    source: Queryable,
    merchant: MerchantContext,
    usage: Usage,
  ): Promise<PaymentMethodForPayment | null> {
    const initiator = initiatorOf(usage);
    const storing = usage.setup_future_usage === 'on' || usage.subsequent_initial_type !== null;
    if (storing && !merchant.tokenizationEnabled) {
      const field = usage.subsequent_initial_type !== null ? 'subsequentInitialType' : 'setupFutureUsage';
      throw new ApiError(
        'tokenization_not_enabled',
        'Tokenization is not enabled for this merchant; ask your account manager to enable it',
        { param: field },
      );
    }
    if (initiator === 'mit' && !merchant.mitEnabled) {
      throw new ApiError(
        'mit_not_enabled',
        'Merchant-initiated payments are not enabled for this merchant; ask your account manager to enable them',
        { param: 'subsequentInitialType' },
      );
    }
    if (initiator === 'mit' && usage.details.use3DRequested) {
      throw invalidField('use3D', 'use3D cannot be true on a MIT payment: the cardholder is absent', 'mit');
    }
    if (storing && usage.customer_id === null) {
      throw invalidField(
        'customerId',
        usage.subsequent_initial_type !== null
          ? 'customerId is required with subsequentInitialType'
          : 'customerId is required when setupFutureUsage is on',
        'required',
      );
    }
    // SPEC §4.2: a zero-amount authorization only verifies and stores the card.
    if (BigInt(usage.amount) === 0n && initiator !== 'first_storing') {
      throw invalidField(
        'amount',
        'amount may be 0 only on a storing payment (setupFutureUsage=on without subsequentInitialType)',
        'zero_amount',
      );
    }
    if (usage.payment_method_id === null) {
      // No method to check yet; the customer is checked now all the same.
      if (usage.customer_id !== null) await paymentMethods.requireCustomer(source, merchant, usage.customer_id);
      return null;
    }
    // One statement reads the method and checks the customer.
    const method = await paymentMethods.loadForPayment(source, merchant, usage.payment_method_id, usage.customer_id);
    checkMethod(usage, method);
    return method;
  }

  function threeDSecureFor(row: queries.PaymentRow): ThreeDSecureState {
    if (row.three_d_secure !== null) return row.three_d_secure;
    return row.details.use3DRequested && initiatorOf(row) !== 'mit' ? 'requested' : 'not_requested';
  }

  /** Runs `work` in a transaction, then publishes the events it recorded once they are committed. */
  async function inTransaction<T>(work: (tx: Queryable, recorded: RecordedEvent[]) => Promise<T>): Promise<T> {
    const recorded: RecordedEvent[] = [];
    const result = await db.transaction((tx) => work(tx, recorded));
    events.published(recorded);
    return result;
  }

  async function record(tx: Queryable, recorded: RecordedEvent[], type: EventType, row: queries.PaymentRow) {
    recorded.push(await events.record(tx, ownerOf(row), type, toEventObject(row)));
  }

  /** The conditional update of `operation`; a lost race becomes a StateConflict that rolls back. */
  async function change(
    tx: Queryable,
    row: queries.PaymentRow,
    operation: PaymentOperation,
    changes: queries.PaymentChanges,
    now: Date,
  ): Promise<queries.PaymentRow> {
    const updated = await queries.changePayment(tx, row.id, startsFrom(operation), changes, now);
    if (!updated) throw new StateConflict(await queries.selectPaymentById(tx, row.id));
    return updated;
  }

  /**
   * An authorization is final and approved (at once, or once it settled): a first storing payment
   * binds its method now (DESIGN §3: only when it succeeds), a pre-authorization waits for
   * capture, anything else has succeeded.
   */
  async function approvedChanges(
    tx: Queryable,
    row: queries.PaymentRow,
    credential: { networkTransactionId: string; networkToken: string | null },
    now: Date,
  ): Promise<{ changes: queries.PaymentChanges; event: EventType }> {
    if (initiatorOf(row) === 'first_storing') {
      const bound = await paymentMethods.bindStoredCredential(tx, ownerOf(row), {
        paymentMethodId: methodIdOf(row),
        customerId: row.customer_id!,
        networkTransactionId: credential.networkTransactionId,
        networkToken: credential.networkToken,
        now,
      });
      if (!bound) {
        // Another customer's storing payment bound the method first (two ran at once): this one
        // fails and its authorization is released, in the same transaction as the failure.
        await jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
        return {
          changes: {
            status: 'failed',
            error_code: 'payment_method_bound_elsewhere',
            error_message: 'The payment method was bound to another customer while this payment was processed',
          },
          event: 'payment.failed',
        };
      }
    }
    if (row.pre_auth === 'y') {
      await jobs.schedule(
        tx,
        jobKinds.expirePreAuthorization,
        row.id,
        new Date(now.getTime() + preAuthorizationLifetimeMs),
      );
      return {
        changes: { status: 'requires_capture', amount_capturable: row.amount },
        event: 'payment.requires_capture',
      };
    }
    return { changes: { status: 'succeeded', amount_received: row.amount }, event: 'payment.succeeded' };
  }

  /**
   * Where the processor's answer is written: over the row the caller claimed (in processing), or,
   * for a processor that keeps no state (Processor.statelessAuthorize), as the payment's first and
   * only insert, so that a payment created with confirm costs one transaction.
   */
  type AuthorizationTarget = 'claimed_row' | 'new_row';

  async function writeAuthorization(
    tx: Queryable,
    target: AuthorizationTarget,
    row: queries.PaymentRow,
    changes: queries.PaymentChanges,
    now: Date,
  ): Promise<queries.PaymentRow> {
    if (target === 'claimed_row') return change(tx, row, 'finishAuthorization', changes, now);
    const { network_token_encrypted: networkToken = null, ...columns } = changes;
    const inserted: queries.PaymentRow = { ...row, ...columns, updated_at: now };
    await queries.insertPayment(tx, inserted, networkToken);
    return inserted;
  }

  /** Outside a transaction: a duplicate orderNo is refused at once. */
  async function insertNew(source: Queryable, row: queries.PaymentRow) {
    try {
      await queries.insertPayment(source, row);
    } catch (err) {
      if (isUniqueViolation(err, 'payments_order_no')) throw duplicateOrder(row.order_no ?? '');
      throw err;
    }
  }

  /**
   * Asks the processor, outside any transaction (a slow processor must not hold a connection or
   * a lock), then records its answer in one transaction: the payment's new state, the binding,
   * the event and any follow-up job. For a claimed_row target, `row` is in processing, claimed by
   * the caller; for a new_row target it is not written yet.
   */
  async function authorize(
    row: queries.PaymentRow,
    method: PaymentMethodForPayment,
    threeDSecure: ThreeDSecureState,
    target: AuthorizationTarget = 'claimed_row',
  ): Promise<queries.PaymentRow> {
    const initiator = initiatorOf(row);
    const request: AuthorizeRequest = {
      paymentId: row.id,
      amount: BigInt(row.amount),
      currency: row.currency,
      card: {
        number: method.card.number,
        brand: method.card.brand,
        expMonth: method.card.expMonth,
        expYear: method.card.expYear,
        // DESIGN §3: the security code serves the first authorization only; MIT never has one.
        securityCode: initiator === 'mit' ? null : method.card.securityCode,
      },
      capture: row.pre_auth === 'n',
      initiator,
      networkTransactionId: initiator === 'cit' || initiator === 'mit' ? method.networkTransactionId : null,
      threeDSecure,
    };
    let outcome: AuthorizeOutcome;
    try {
      outcome = await processor.authorize(request);
    } catch (err) {
      // No answer at all (an outage): the payment must not stay in processing forever. It fails,
      // so that the merchant can retry with a new payment, and the error goes to the log.
      await inTransaction(async (tx, recorded) => {
        const failed = await writeAuthorization(
          tx,
          target,
          row,
          { status: 'failed', error_code: 'processing_error', error_message: 'The payment could not be processed.' },
          clock.now(),
        );
        await record(tx, recorded, 'payment.failed', failed);
      }).catch(ignoreConflict);
      throw err;
    }

    try {
      return await inTransaction(async (tx, recorded) => {
        const now = clock.now();
        const risk = { risk_score: outcome.risk.riskScore, risk_message: outcome.risk.riskMessage };
        let codeErased = false;
        let changes: queries.PaymentChanges;
        let event: EventType | null;
        switch (outcome.kind) {
          case 'challenge':
            // No event: the payment waits for the cardholder (DESIGN §4 requires_action).
            changes = { ...risk, status: 'requires_action', use_3d: true };
            event = null;
            break;
          case 'declined':
            changes = {
              ...risk,
              status: 'failed',
              processor_reference: outcome.processorReference,
              error_code: outcome.code,
              error_message: outcome.message,
            };
            event = 'payment.failed';
            break;
          case 'approved': {
            const approved = {
              ...risk,
              processor_reference: outcome.processorReference,
              network_transaction_id: outcome.networkTransactionId,
              error_code: null,
              error_message: null,
            };
            if (outcome.followUp?.kind === 'settle') {
              // Not succeeded yet, so nothing is bound yet: the network token waits, encrypted.
              const token = initiator === 'first_storing' ? outcome.networkToken : null;
              changes = {
                ...approved,
                status: 'processing',
                network_token_encrypted: token === null ? null : vault.encrypt(token, row.id),
              };
              event = 'payment.processing';
              await jobs.schedule(tx, jobKinds.settle, row.id, new Date(now.getTime() + outcome.followUp.afterMs));
              break;
            }
            const final = await approvedChanges(
              tx,
              row,
              { networkTransactionId: outcome.networkTransactionId, networkToken: outcome.networkToken },
              now,
            );
            changes = { ...approved, ...final.changes };
            event = final.event;
            // Binding the card erased its code in the same statement.
            codeErased = initiator === 'first_storing' && final.changes.status !== 'failed';
            if (outcome.followUp?.kind === 'reverse' && final.changes.status !== 'failed') {
              await jobs.schedule(tx, jobKinds.reverse, row.id, new Date(now.getTime() + outcome.followUp.afterMs));
            }
            break;
          }
        }
        // The processor has seen the code once; a challenge is not an attempt, since the
        // authorization after it still needs the code.
        if (outcome.kind !== 'challenge' && method.card.securityCode !== null && !codeErased) {
          await paymentMethods.eraseSecurityCode(tx, methodIdOf(row));
        }
        const updated = await writeAuthorization(tx, target, row, changes, now);
        if (event !== null) await record(tx, recorded, event, updated);
        return updated;
      });
    } catch (caught) {
      // A new row's insert is sent when the transaction ends, so its duplicate orderNo shows here.
      const err =
        target === 'new_row' && isUniqueViolation(caught, 'payments_order_no')
          ? duplicateOrder(row.order_no ?? '')
          : caught;
      // The answer was not recorded (only a bug moves a claimed payment out of processing; a new
      // row can meet a duplicate orderNo): an approved authorization must still be released.
      if (outcome.kind === 'approved' && (err instanceof StateConflict || target === 'new_row')) {
        await processor.cancel(outcome.processorReference);
      }
      throw err;
    }
  }

  /** Claims the payment for an operation; a lost race answers with the status that won. */
  async function claim(
    source: Queryable,
    row: queries.PaymentRow,
    operation: PaymentOperation,
    changes: queries.PaymentChanges,
  ): Promise<queries.PaymentRow> {
    const claimed = await queries.changePayment(source, row.id, startsFrom(operation), changes, clock.now());
    if (claimed) return claimed;
    const current = await queries.selectPaymentById(source, row.id);
    throw invalidState(current?.status ?? row.status, operation);
  }

  function conflictAsInvalidState(err: unknown, operation: PaymentOperation): never {
    if (err instanceof StateConflict && err.current) throw invalidState(err.current.status, operation);
    throw err;
  }

  // Scheduled follow-ups. Each re-reads the payment and changes it conditionally, so running one
  // twice (a worker died after the change but before marking the job done) changes nothing.

  jobs.register(jobKinds.settle, async (paymentId) => {
    const row = await queries.selectPaymentById(db, paymentId);
    if (!row || row.status !== 'processing' || row.processor_reference === null) return;
    const outcome = await processor.resolveFollowUp(row.processor_reference, 'settle');
    await inTransaction(async (tx, recorded) => {
      const now = clock.now();
      let changes: queries.PaymentChanges;
      let event: EventType;
      if (outcome.kind === 'succeeded') {
        const encrypted = await queries.selectNetworkToken(tx, row.id);
        const networkToken = encrypted === null ? null : await vault.decrypt(encrypted, row.id);
        ({ changes, event } = await approvedChanges(
          tx,
          row,
          { networkTransactionId: row.network_transaction_id ?? '', networkToken },
          now,
        ));
      } else {
        changes = { status: 'failed', error_code: outcome.code, error_message: outcome.message };
        event = 'payment.failed';
      }
      const updated = await change(tx, row, 'settle', { ...changes, network_token_encrypted: null }, now);
      await record(tx, recorded, event, updated);
    }).catch(ignoreConflict);
  });

  jobs.register(jobKinds.reverse, async (paymentId) => {
    const row = await queries.selectPaymentById(db, paymentId);
    if (!row || !startsFrom('reverse').includes(row.status) || row.processor_reference === null) return;
    const outcome = await processor.resolveFollowUp(row.processor_reference, 'reverse');
    if (outcome.kind === 'succeeded') return;
    // SPEC §6.1.4: a state change after the fact, told to the merchant by a second event.
    await inTransaction(async (tx, recorded) => {
      const now = clock.now();
      const updated = await change(
        tx,
        row,
        'reverse',
        {
          status: 'failed',
          error_code: outcome.code,
          error_message: outcome.message,
          amount_received: '0',
          amount_capturable: '0',
        },
        now,
      );
      await record(tx, recorded, 'payment.failed', updated);
    }).catch(ignoreConflict);
  });

  jobs.register(jobKinds.expirePreAuthorization, async (paymentId) => {
    const row = await queries.selectPaymentById(db, paymentId);
    if (!row || !startsFrom('expirePreAuthorization').includes(row.status)) return;
    await inTransaction(async (tx, recorded) => {
      const now = clock.now();
      const updated = await change(
        tx,
        row,
        'expirePreAuthorization',
        {
          status: 'canceled',
          canceled_at: now,
          cancellation_reason: expiredCancellationReason,
          amount_capturable: '0',
        },
        now,
      );
      await jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
      await record(tx, recorded, 'payment.canceled', updated);
    }).catch(ignoreConflict);
  });

  /** Releases a held or orphaned authorization; scheduled in the transaction that made it needless. */
  jobs.register(jobKinds.voidAuthorization, async (paymentId) => {
    const row = await queries.selectPaymentById(db, paymentId);
    if (row?.processor_reference) await processor.cancel(row.processor_reference);
  });

  /**
   * The reconciliation sweep: a payment left in processing by a process that died between
   * claiming it and recording the processor's answer is authorized again and recorded, with its
   * event. Safe only with a processor that keeps no state (asking it again changes nothing on its
   * side); a connector to a real network would have to ask the network what became of the first
   * attempt, so with one the payments are only reported. Returns how many were resumed.
   */
  async function resumeInterruptedAuthorizations(): Promise<number> {
    const before = new Date(clock.now().getTime() - interruptedAuthorizationAfterMs);
    const rows = await queries.selectInterruptedAuthorizations(db, before, 20);
    if (rows.length > 0 && !processor.statelessAuthorize) {
      logger.warn({ paymentIds: rows.map((row) => row.id) }, 'payments left in processing need reconciling');
      return 0;
    }
    let resumed = 0;
    for (const row of rows) {
      const claimed = await queries.reclaimInterruptedAuthorization(db, row, clock.now());
      if (!claimed) continue;
      const method = await paymentMethods.loadForPayment(db, ownerOf(claimed), methodIdOf(claimed));
      try {
        checkMethod(claimed, method);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        // The method changed meanwhile (detached, bound to someone else): the payment fails with the reason.
        await inTransaction(async (tx, recorded) => {
          const failed = await change(
            tx,
            claimed,
            'finishAuthorization',
            { status: 'failed', error_code: err.code, error_message: err.message },
            clock.now(),
          );
          await record(tx, recorded, 'payment.failed', failed);
        }).catch(ignoreConflict);
        resumed++;
        continue;
      }
      await authorize(claimed, method, threeDSecureFor(claimed)).catch(ignoreConflict);
      resumed++;
    }
    return resumed;
  }

  return {
    resumeInterruptedAuthorizations,

    async create(merchant: MerchantContext, input: CreatePaymentBody): Promise<Payment> {
      await requireAllowedNotifyUrl(input);
      const now = clock.now();
      const confirm = input.confirm === true || input.confirm === 'true';
      const paymentMethod = input.paymentMethod ?? null;
      if (confirm && paymentMethod === null) throw paymentMethodRequired();
      const row: queries.PaymentRow = {
        id: newId('pt'),
        merchant_id: merchant.merchantId,
        mode: merchant.mode,
        customer_id: input.customerId ?? null,
        payment_method_id: paymentMethod,
        amount: parseAmountField(input.amount).toString(),
        currency: parseCurrencyField(input.currency),
        // With confirm the payment is created already claimed for its authorization; without a
        // method it waits for one (DESIGN §4 requires_payment_method).
        status: confirm ? 'processing' : paymentMethod === null ? 'requires_payment_method' : 'requires_confirmation',
        order_no: input.orderNo ?? null,
        confirmation_method: input.confirmationMethod ?? 'automatic',
        pre_auth: input.preAuth ?? 'n',
        setup_future_usage: input.setupFutureUsage ?? 'off',
        subsequent_initial_type: input.subsequentInitialType ?? null,
        details: detailsOf(input, null),
        amount_received: '0',
        amount_capturable: '0',
        risk_score: null,
        risk_message: null,
        error_code: null,
        error_message: null,
        use_3d: false,
        processor_reference: null,
        network_transaction_id: null,
        three_d_secure: null,
        canceled_at: null,
        cancellation_reason: null,
        invoice_id: null,
        created_at: now,
        updated_at: now,
      };
      const method = await checkRules(db, merchant, row);
      if (confirm && method !== null && processor.statelessAuthorize) {
        return toPayment(await authorize(row, method, threeDSecureFor(row), 'new_row'));
      }
      await insertNew(db, row);
      if (!confirm || method === null) return toPayment(row);
      return toPayment(await authorize(row, method, threeDSecureFor(row)));
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<Payment> {
      return toPayment(await load(db, merchant, id));
    },

    async list(merchant: MerchantContext, query: ListPaymentsQuery): Promise<Page<Payment>> {
      const date = (value: string | undefined) => (value === undefined ? undefined : new Date(value));
      const { rows, hasMore } = await queries.selectPaymentPage(
        db,
        merchant.merchantId,
        merchant.mode,
        {
          customerId: query.customerId,
          orderNo: query.orderNo,
          createdGt: date(query['created[gt]']),
          createdGte: date(query['created[gte]']),
          createdLt: date(query['created[lt]']),
          createdLte: date(query['created[lte]']),
        },
        query,
      );
      return { data: rows.map(toPayment), hasMore };
    },

    /** Changes request fields while the payment is not yet processed; every rule is checked again. */
    async update(merchant: MerchantContext, id: string, changes: UpdatePaymentBody): Promise<Payment> {
      await requireAllowedNotifyUrl(changes);
      const current = await load(db, merchant, id);
      requireStatus(current, 'update');
      const merged: queries.PaymentRow = {
        ...current,
        amount: changes.amount === undefined ? current.amount : parseAmountField(changes.amount).toString(),
        currency: changes.currency === undefined ? current.currency : parseCurrencyField(changes.currency),
        customer_id: changes.customerId ?? current.customer_id,
        payment_method_id: changes.paymentMethod ?? current.payment_method_id,
        order_no: changes.orderNo ?? current.order_no,
        pre_auth: changes.preAuth ?? current.pre_auth,
        setup_future_usage: changes.setupFutureUsage ?? current.setup_future_usage,
        details: detailsOf(changes, current.details),
      };
      await checkRules(db, merchant, merged);
      // The first payment method moves the payment on to requires_confirmation.
      const providesMethod = current.payment_method_id === null && merged.payment_method_id !== null;
      try {
        const updated = await claim(db, current, providesMethod ? 'provideMethod' : 'update', {
          ...(providesMethod ? { status: 'requires_confirmation' as const } : {}),
          amount: merged.amount,
          currency: merged.currency,
          customer_id: merged.customer_id,
          payment_method_id: merged.payment_method_id,
          order_no: merged.order_no,
          pre_auth: merged.pre_auth,
          setup_future_usage: merged.setup_future_usage,
          details: merged.details,
        });
        return toPayment(updated);
      } catch (err) {
        if (isUniqueViolation(err, 'payments_order_no')) throw duplicateOrder(merged.order_no ?? '');
        throw err;
      }
    },

    /** requires_confirmation → the authorization, with what the payer's session adds. */
    async confirm(merchant: MerchantContext, id: string, input: ConfirmPaymentBody): Promise<Payment> {
      await requireAllowedNotifyUrl(input);
      const current = await load(db, merchant, id);
      requireStatus(current, 'confirm');
      const next: queries.PaymentRow = {
        ...current,
        payment_method_id: input.paymentMethod ?? current.payment_method_id,
        details: detailsOf(input, current.details),
      };
      if (next.payment_method_id === null) throw paymentMethodRequired();
      const method = (await checkRules(db, merchant, next))!;
      const claimed = await claim(db, current, 'confirm', {
        status: 'processing',
        payment_method_id: next.payment_method_id,
        details: next.details,
      });
      return toPayment(await authorize(claimed, method, threeDSecureFor(claimed)));
    },

    /** DESIGN §4: the full amount of a pre-authorization. */
    async capture(merchant: MerchantContext, id: string): Promise<Payment> {
      const current = await load(db, merchant, id);
      requireStatus(current, 'capture');
      const reference = current.processor_reference;
      if (reference === null) throw new Error(`Payment ${current.id} awaits capture without an authorization`);
      // Held in processing while the processor captures, so that a cancel or the 7-day expiry
      // cannot release the authorization underneath the capture.
      const claimed = await claim(db, current, 'capture', { status: 'processing' });
      let captured: CaptureOutcome;
      try {
        captured = await processor.capture(reference, BigInt(claimed.amount));
      } catch (err) {
        // No answer: the authorization is still held, so the payment can be captured again.
        await queries.changePayment(db, id, startsFrom('finishCapture'), { status: 'requires_capture' }, clock.now());
        throw err;
      }
      const updated = await inTransaction(async (tx, recorded) => {
        const now = clock.now();
        if (captured.kind === 'captured') {
          const row = await change(
            tx,
            claimed,
            'finishCapture',
            { status: 'succeeded', amount_received: claimed.amount, amount_capturable: '0' },
            now,
          );
          await record(tx, recorded, 'payment.succeeded', row);
          return row;
        }
        const row = await change(
          tx,
          claimed,
          'finishCapture',
          { status: 'failed', error_code: captured.code, error_message: captured.message, amount_capturable: '0' },
          now,
        );
        await jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
        await record(tx, recorded, 'payment.failed', row);
        return row;
      }).catch((err: unknown) => conflictAsInvalidState(err, 'capture'));
      return toPayment(updated);
    },

    async cancel(merchant: MerchantContext, id: string, input: CancelPaymentBody): Promise<Payment> {
      const current = await load(db, merchant, id);
      requireStatus(current, 'cancel');
      const updated = await inTransaction(async (tx, recorded) => {
        const now = clock.now();
        const row = await change(
          tx,
          current,
          'cancel',
          {
            status: 'canceled',
            canceled_at: now,
            cancellation_reason: input.cancellationReason ?? null,
            amount_capturable: '0',
          },
          now,
        );
        // Only a pre-authorization awaiting capture holds funds; the hold is released with the
        // cancellation committed, retried by the job runner until the processor answers.
        if (row.processor_reference !== null) await jobs.schedule(tx, jobKinds.voidAuthorization, row.id, now);
        await record(tx, recorded, 'payment.canceled', row);
        return row;
      }).catch((err: unknown) => conflictAsInvalidState(err, 'cancel'));
      return toPayment(updated);
    },

    /** The hosted page's view of a payment awaiting 3-D Secure; null for a wrong id or secret. */
    async challengePage(
      paymentId: string,
      secret: string,
    ): Promise<{ view: ChallengeView; status: PaymentStatus } | null> {
      if (!isId('pt', paymentId) || !secretMatches(paymentId, secret)) return null;
      const row = await queries.selectPaymentById(db, paymentId);
      if (!row) return null;
      return {
        status: row.status,
        view: {
          paymentId: row.id,
          clientSecret: clientSecretOf(row.id),
          amountText: `${formatAmount(BigInt(row.amount), row.currency)} ${row.currency}`,
          description: row.details.description,
        },
      };
    },

    /**
     * The cardholder answered the hosted challenge. The authorization is asked again with the
     * result ('failed' is declined as authentication_failed); with manual confirmation a pass only
     * returns the payment to requires_confirmation, for the merchant's /confirm.
     * Returns null for a wrong id or secret.
     */
    async completeChallenge(
      paymentId: string,
      secret: string,
      result: 'pass' | 'fail',
    ): Promise<{ payment: Payment; returnUrl: string | null; completedNow: boolean } | null> {
      if (!isId('pt', paymentId) || !secretMatches(paymentId, secret)) return null;
      const row = await queries.selectPaymentById(db, paymentId);
      if (!row) return null;
      const answer = (payment: queries.PaymentRow, completedNow: boolean) => ({
        payment: toPayment(payment),
        returnUrl: payment.details.returnUrl,
        completedNow,
      });
      if (!startsFrom('completeChallenge').includes(row.status)) return answer(row, false);
      const passed = result === 'pass';
      if (passed && row.confirmation_method === 'manual') {
        const waiting = await queries.changePayment(
          db,
          row.id,
          startsFrom('completeChallenge'),
          { status: 'requires_confirmation', three_d_secure: 'passed' },
          clock.now(),
        );
        return waiting ? answer(waiting, true) : answer((await queries.selectPaymentById(db, row.id)) ?? row, false);
      }
      const owner = ownerOf(row);
      const method = await paymentMethods.loadForPayment(db, owner, methodIdOf(row));
      let unusable: ApiError | null = null;
      try {
        checkMethod(row, method);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        unusable = err;
      }
      if (unusable !== null) {
        // The method changed while the cardholder was on the page (detached, or bound to someone
        // else): nothing can be fixed from here, so the payment fails with the reason.
        const reason = unusable;
        const failed = await inTransaction(async (tx, recorded) => {
          const now = clock.now();
          const updated = await change(
            tx,
            row,
            'completeChallenge',
            { status: 'processing', three_d_secure: passed ? 'passed' : 'failed' },
            now,
          );
          const final = await change(
            tx,
            updated,
            'finishAuthorization',
            { status: 'failed', error_code: reason.code, error_message: reason.message },
            now,
          );
          await record(tx, recorded, 'payment.failed', final);
          return final;
        }).catch(async (err: unknown) => {
          if (err instanceof StateConflict && err.current) return err.current;
          throw err;
        });
        return answer(failed, true);
      }
      const claimed = await queries.changePayment(
        db,
        row.id,
        startsFrom('completeChallenge'),
        { status: 'processing', three_d_secure: passed ? 'passed' : 'failed' },
        clock.now(),
      );
      if (!claimed) return answer((await queries.selectPaymentById(db, row.id)) ?? row, false);
      return answer(await authorize(claimed, method, passed ? 'passed' : 'failed'), true);
    },
  };
}

function ignoreConflict(err: unknown): void {
  // A job that finds its payment already changed by another process has nothing left to do.
  if (!(err instanceof StateConflict)) throw err;
}

export type PaymentService = ReturnType<typeof createPaymentService>;
