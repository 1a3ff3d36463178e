/**
 * The connector to whatever authorizes card payments: the built-in sandbox, or a connector to a
 * real processor (Adyen, Stripe) behind a processor account (docs/processors.md). Declines,
 * 3-D Secure challenges and answers still to come are outcomes the caller switches over, not
 * exceptions; a processor throws only when it cannot answer at all (a timeout, a 5xx, a reset
 * connection, an answer it cannot understand), and the caller then treats the outcome as unknown.
 *
 * Money is never moved twice: every call that moves money carries an idempotency key derived
 * from the Tessera object and the attempt, the same on every replay of that attempt, so asking
 * again after an unknown outcome returns the first answer instead of charging again.
 */

export interface RiskInfo {
  riskScore: number;
  riskMessage: string;
}

export type DeclineCode =
  | 'card_declined'
  | 'insufficient_funds'
  | 'expired_card'
  | 'incorrect_cvc'
  | 'risk_rejected'
  | 'authentication_failed'
  | 'processing_error';

export type PaymentInitiator = 'one_off' | 'first_storing' | 'cit' | 'mit';

export type ThreeDSecureState = 'not_requested' | 'requested' | 'passed' | 'failed';

export interface AuthorizeRequest {
  paymentId: string;
  /** The same for every replay of this authorization attempt (`<paymentId>.authorize`). */
  idempotencyKey: string;
  /** Minor units of `currency`. */
  amount: bigint;
  currency: string;
  card: {
    number: string;
    brand: string;
    expMonth: string;
    expYear: string;
    securityCode: string | null;
    holderName: string | null;
  };
  /** False for a pre-authorization (preAuth=y): the funds are held until capture() or cancel(). */
  capture: boolean;
  initiator: PaymentInitiator;
  /** True for a payment of a recurring series (a subscription rather than unscheduled card-on-file). */
  recurring: boolean;
  /** The stored credential's network reference, sent on CIT and MIT (docs/api.md, Stored cards). */
  networkTransactionId: string | null;
  /** 'passed' or 'failed' when the payment resumes after the sandbox's challenge page. */
  threeDSecure: ThreeDSecureState;
  /** The customer the card is stored for (a shopper reference at the processor), when any. */
  customerId: string | null;
  /** The merchant's order number, sent as the processor's reference where it has room for one. */
  orderNo: string | null;
  /** Where a processor's 3-D Secure page sends the shopper back: Tessera, which then calls completeRedirect. */
  returnUrl: string;
}

export type FollowUpKind = 'settle' | 'reverse' | 'dispute';

/** A dispute the sandbox's dispute cards open after the payment succeeded (docs/disputes.md, Sandbox). */
export interface SandboxDispute {
  reason: 'fraudulent' | 'product_not_received' | 'general';
  stage: 'inquiry' | 'chargeback';
  networkReasonCode: string;
}

/** Where a processor's own 3-D Secure step sends the shopper (a redirect or a form post). */
export interface RedirectAction {
  url: string;
  method: 'GET' | 'POST';
  /** Form fields for a POST; empty for a GET. */
  data: Record<string, string>;
}

export type AuthorizeOutcome =
  | {
      kind: 'approved';
      processorReference: string;
      networkTransactionId: string;
      /** A network token (DPAN) provisioned for a first storing payment; null otherwise. */
      networkToken: string | null;
      risk: RiskInfo;
      /** False when the request had capture=false: capture() or cancel() comes later. */
      captured: boolean;
      /**
       * 'settle': the payment is still processing and settles later; 'reverse': it succeeded but
       * will be reversed after the fact; 'dispute': it succeeded and the cardholder will dispute it
       * (the sandbox's dispute cards). Each time the caller asks resolveFollowUp() after `afterMs`.
       */
      followUp: null | { kind: FollowUpKind; afterMs: number };
      /** The fee the processor reported for this payment (minor units of its currency), when it did. */
      processorFee?: bigint | null;
    }
  | {
      kind: 'declined';
      processorReference: string;
      code: DeclineCode;
      message: string;
      risk: RiskInfo;
      /** The processor's own reason, as it gave it (kept as the payment's processorReason). */
      processorReason?: string | null;
    }
  /** The sandbox's 3-D Secure challenge: authorize again with 'passed' or 'failed'. */
  | { kind: 'challenge'; risk: RiskInfo }
  /**
   * A processor's own 3-D Secure step: the shopper goes to `action`, comes back to `returnUrl`,
   * and completeRedirect() with what the shopper brought back gives the outcome.
   */
  | { kind: 'redirect'; processorReference: string | null; action: RedirectAction; risk: RiskInfo }
  /**
   * The processor took the payment but has no outcome yet (it will notify): the payment stays
   * processing until a notification or the reconciliation sweep tells the outcome.
   */
  | { kind: 'pending'; processorReference: string | null; risk: RiskInfo };

export type FollowUpOutcome =
  | { kind: 'succeeded' }
  | { kind: 'failed'; code: DeclineCode; message: string }
  | { kind: 'reversed'; code: 'payment_reversed'; message: string }
  | { kind: 'disputed'; disputes: SandboxDispute[] };

/** 'pending': the processor took the capture and tells its outcome later (a notification). */
export type CaptureOutcome =
  { kind: 'captured' } | { kind: 'pending' } | { kind: 'failed'; code: DeclineCode; message: string };

/** Why a refund failed (the refund's `failureReason`). */
export type RefundFailureReason = 'card_closed' | 'declined' | 'processing_error';

/**
 * The processor's first answer to a refund. Card networks usually settle a refund later:
 * 'accepted' says it is under way; with `followUp` the caller asks resolveRefund() after
 * `afterMs`, with null the processor tells the outcome by a notification.
 */
export type RefundOutcome =
  | { kind: 'succeeded'; processorReference: string }
  | { kind: 'accepted'; processorReference: string; followUp: { afterMs: number } | null }
  | { kind: 'failed'; processorReference: string | null; reason: RefundFailureReason };

/** How an accepted refund settled; 'pending' when the processor does not know yet. */
export type RefundSettlement =
  { kind: 'succeeded' } | { kind: 'pending' } | { kind: 'failed'; reason: RefundFailureReason };

export interface CaptureRequest {
  paymentId: string;
  paymentReference: string;
  amount: bigint;
  currency: string;
  /** `<paymentId>.capture` */
  idempotencyKey: string;
}

export interface CancelRequest {
  paymentId: string;
  paymentReference: string;
  /** `<paymentId>.cancel` */
  idempotencyKey: string;
}

export interface RefundRequest {
  paymentId: string;
  paymentReference: string;
  refundId: string;
  amount: bigint;
  currency: string;
  /** The refund's id: asking again for the same refund must not give the money back twice. */
  idempotencyKey: string;
}

export interface CompleteRedirectRequest {
  paymentId: string;
  /** The reference the 'redirect' outcome gave, when it gave one. */
  processorReference: string | null;
  /** The query or form parameters the shopper came back with (e.g. Adyen's redirectResult). */
  params: Record<string, string>;
  /** `<paymentId>.details` */
  idempotencyKey: string;
}

/** What an authorization became, asked after its outcome was unknown (a timeout, a crash). */
export interface LookupRequest {
  paymentId: string;
  processorReference: string | null;
}

export interface Processor {
  readonly name: string;
  /**
   * True when an authorization that is never recorded leaves nothing behind to release (the
   * sandbox, which keeps no state): a payment created with confirm may then be written once,
   * with the processor's answer, in one transaction, and an outage fails the payment at once.
   * A connector to a real network says false: the payment is written (processing) before the
   * network is asked, so that a crash between the two leaves a record of the attempt, and an
   * unknown outcome leaves it processing for the sweep to replay with the same idempotency key.
   */
  readonly statelessAuthorize: boolean;
  authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome>;
  /** The outcome after the shopper came back from a 'redirect' outcome's action. */
  completeRedirect(request: CompleteRedirectRequest): Promise<AuthorizeOutcome>;
  resolveFollowUp(processorReference: string, kind: FollowUpKind): Promise<FollowUpOutcome>;
  capture(request: CaptureRequest): Promise<CaptureOutcome>;
  cancel(request: CancelRequest): Promise<void>;
  /** Gives back `amount` (minor units) of the captured payment `paymentReference`. */
  refund(request: RefundRequest): Promise<RefundOutcome>;
  /** The settlement of a refund answered 'accepted', asked after its follow-up delay. */
  resolveRefund(refundReference: string): Promise<RefundSettlement>;
}

/**
 * A processor's notification, decoded and verified by its connector (the processor's webhook
 * to Tessera, docs/processors.md). `id` is unique per notification at that processor, so that a
 * notification sent twice is applied once.
 */
export type ProcessorNotification =
  | {
      kind: 'authorisation';
      id: string;
      paymentId: string;
      outcome: Extract<AuthorizeOutcome, { kind: 'approved' } | { kind: 'declined' }>;
    }
  | {
      kind: 'capture';
      id: string;
      paymentId: string;
      processorReference: string;
      success: boolean;
      reason: string | null;
    }
  | { kind: 'cancellation'; id: string; paymentId: string; processorReference: string; success: boolean }
  | {
      kind: 'refund';
      id: string;
      refundId: string;
      processorReference: string;
      success: boolean;
      reason: RefundFailureReason | null;
    }
  | {
      kind: 'dispute';
      id: string;
      paymentId: string;
      processorReference: string;
      /** The processor's own name of the dispute's step (e.g. NOTIFICATION_OF_CHARGEBACK, charge.dispute.created). */
      step: string;
      /** The processor's reference of the dispute itself (Stripe's du_…; Adyen's: the payment's pspReference). */
      disputeReference: string;
      /** The dispute's reference at the processor's dispute API when not disputeReference (Adyen: the chargeback's pspReference). */
      responseReference?: string;
      /** The dispute's status as the processor gives it (Stripe's `status`), when it does. */
      processorStatus: string | null;
      amount: bigint;
      currency: string;
      reasonCode: string | null;
    }
  /** A notification Tessera has no use for (it is acknowledged and logged by type). */
  | { kind: 'ignored'; id: string; type: string };

/** What a connector makes of a notification request: what to apply and what to answer. */
export interface NotificationBatch {
  notifications: ProcessorNotification[];
  /** The body the processor expects back (Adyen: `[accepted]`). */
  answer: { contentType: string; body: string };
}

/** A notification whose signature does not verify: answered 401, nothing applied. */
export class NotificationRefused extends Error {}

/** A live dispute the merchant responds to (docs/disputes.md, Live). */
export interface DisputeResponseRequest {
  disputeId: string;
  /** The processor's reference of the dispute for its dispute API (Stripe's du_…, Adyen's chargeback pspReference). */
  disputeReference: string;
  /**
   * `<disputeId>.submit.<n>` or `<disputeId>.accept.<n>`, n the submission count plus one: the
   * same on every retry of one response, since the count only grows once it is recorded.
   */
  idempotencyKey: string;
}

/** An evidence file as the processor gets it: the bytes Tessera keeps (docs/disputes.md, Evidence files). */
export interface DisputeEvidenceFile {
  /** The evidence field naming it (`receipt`, `customerCommunication`, …). */
  field: string;
  fileId: string;
  filename: string;
  type: 'pdf' | 'png' | 'jpg';
  contents: Buffer;
}

export interface SubmitDisputeEvidenceRequest extends DisputeResponseRequest {
  /** The text fields that are set, by their names in docs/disputes.md (`productDescription`, …). */
  text: Record<string, string>;
  files: DisputeEvidenceFile[];
}

/**
 * The evidence cannot be sent to this processor as it is (Adyen takes PDF and JPEG documents
 * only): nothing was sent, and the merchant changes the evidence. `field` names the evidence field.
 */
export class EvidenceRefused extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'EvidenceRefused';
  }
}

/** A connector to a real processor also reads that processor's notifications and answers its disputes. */
export interface LiveProcessor extends Processor {
  /** Verifies and decodes one notification request; throws NotificationRefused when it does not verify. */
  parseNotification(request: { headers: Record<string, string | undefined>; rawBody: string }): NotificationBatch;
  /** Sends the evidence and submits it; throws when the processor did not take it (EvidenceRefused, or a failure). */
  submitDisputeEvidence(request: SubmitDisputeEvidenceRequest): Promise<void>;
  /** Gives the dispute up at the processor. */
  acceptDispute(request: DisputeResponseRequest): Promise<void>;
}

/** What a payment says about where it was processed (its account; null: the built-in sandbox). */
export interface ProcessedBy {
  processor_account_id: string | null;
  mode: string;
}

/** Which processor a payment goes through (src/processor-accounts/connectors.ts). */
export interface ProcessorRouter {
  /** The processor of a payment: the sandbox when it has no account; a live one without throws no_live_processor. */
  of(payment: ProcessedBy): Promise<Processor>;
  /**
   * The processor a payment is about to be sent to for the first time (created or confirmed): as
   * of(), but a live payment whose account has been disabled since is refused (no_live_processor).
   * Replays of an authorization already sent use of(): that one may have moved money.
   */
  forNewAuthorization(payment: ProcessedBy): Promise<Processor>;
}
