/**
 * The connector to whatever authorizes card payments: the built-in sandbox today, an acquirer
 * later. Declines and 3-D Secure challenges are outcomes the caller switches over, not
 * exceptions; a processor throws only when it cannot answer at all (an outage or a bug).
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
  /** Minor units of `currency`. */
  amount: bigint;
  currency: string;
  card: { number: string; brand: string; expMonth: string; expYear: string; securityCode: string | null };
  /** False for a pre-authorization (preAuth=y): the funds are held until capture() or cancel(). */
  capture: boolean;
  initiator: PaymentInitiator;
  /** The stored credential's network reference, sent on CIT and MIT (DESIGN §3). */
  networkTransactionId: string | null;
  /** 'passed' or 'failed' when the payment resumes after the challenge page. */
  threeDSecure: ThreeDSecureState;
}

export type FollowUpKind = 'settle' | 'reverse';

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
       * will be reversed after the fact. Either way the caller asks resolveFollowUp() after `afterMs`.
       */
      followUp: null | { kind: FollowUpKind; afterMs: number };
    }
  | { kind: 'declined'; processorReference: string; code: DeclineCode; message: string; risk: RiskInfo }
  /** 3-D Secure challenge needed before authorization; authorize again with 'passed' or 'failed'. */
  | { kind: 'challenge'; risk: RiskInfo };

export type FollowUpOutcome =
  | { kind: 'succeeded' }
  | { kind: 'failed'; code: DeclineCode; message: string }
  | { kind: 'reversed'; code: 'payment_reversed'; message: string };

export type CaptureOutcome = { kind: 'captured' } | { kind: 'failed'; code: DeclineCode; message: string };

/** Why a refund failed (the refund's `failureReason`). */
export type RefundFailureReason = 'card_closed' | 'declined' | 'processing_error';

/**
 * The processor's first answer to a refund. Card networks usually settle a refund later:
 * 'accepted' says it is under way and that the caller asks resolveRefund() after `afterMs`.
 */
export type RefundOutcome =
  | { kind: 'succeeded'; processorReference: string }
  | { kind: 'accepted'; processorReference: string; followUp: { afterMs: number } }
  | { kind: 'failed'; processorReference: string | null; reason: RefundFailureReason };

/** How an accepted refund settled. */
export type RefundSettlement = { kind: 'succeeded' } | { kind: 'failed'; reason: RefundFailureReason };

export interface Processor {
  readonly name: string;
  /**
   * True when an authorization that is never recorded leaves nothing behind to release (the
   * sandbox, which keeps no state): a payment created with confirm may then be written once,
   * with the processor's answer, in one transaction. A connector to a real network says false:
   * the payment is written (processing) before the network is asked, so that a crash between
   * the two leaves a record of the attempt.
   */
  readonly statelessAuthorize: boolean;
  authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome>;
  resolveFollowUp(processorReference: string, kind: FollowUpKind): Promise<FollowUpOutcome>;
  capture(processorReference: string, amount: bigint): Promise<CaptureOutcome>;
  cancel(processorReference: string): Promise<void>;
  /**
   * Gives back `amount` (minor units) of the captured payment `paymentReference`. `refundId` is
   * the idempotency key: asking again for the same refund (a retry after an outage or a crash)
   * must not give the money back twice.
   */
  refund(paymentReference: string, amount: bigint, refundId: string): Promise<RefundOutcome>;
  /** The settlement of a refund answered 'accepted', asked after its follow-up delay. */
  resolveRefund(refundReference: string): Promise<RefundSettlement>;
}
