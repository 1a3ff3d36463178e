import { createHash, randomInt } from 'node:crypto';
import type {
  AuthorizeOutcome,
  AuthorizeRequest,
  CancelRequest,
  CaptureOutcome,
  CaptureRequest,
  DeclineCode,
  FollowUpKind,
  FollowUpOutcome,
  Processor,
  RefundOutcome,
  RefundRequest,
  RefundSettlement,
  RiskInfo,
  SandboxDispute,
} from './processor.js';

/** docs/api.md#sandbox-test-cards: the sandbox test cards whose behaviour is not "succeeds". */
const testCards = {
  declined: '4000000000000002',
  alwaysDeclined: '4000000000000077',
  insufficientFunds: '4000000000009995',
  expired: '4000000000000069',
  incorrectCvc: '4000000000000127',
  threeDSecure: '4000002500003155',
  mitDeclined: '4000000000000341',
  settlesLater: '4000000000000630',
  reversedLater: '4000000000000259',
  highRisk: '4000000000004954',
  refundFails: '4000000000005126',
  refundSucceedsAtOnce: '4000000000007726',
  // docs/disputes.md, Sandbox: the payment succeeds, then a dispute opens a few seconds later.
  disputedFraudulent: '4000000000000275',
  disputedNotReceived: '4000000000002685',
  disputeInquiry: '4000000000001976',
  disputedTwice: '4000000404000079',
} as const;

/** The dispute cards' follow-up letter in the reference, and the disputes each opens. */
const disputeFollowUps = new Map<string, ReferenceFollowUp>([
  [testCards.disputedFraudulent, 'f'],
  [testCards.disputedNotReceived, 'p'],
  [testCards.disputeInquiry, 'q'],
  [testCards.disputedTwice, 't'],
]);
const fraudulent: SandboxDispute = { reason: 'fraudulent', stage: 'chargeback', networkReasonCode: '10.4' };
const disputesByFollowUp: Partial<Record<ReferenceFollowUp, SandboxDispute[]>> = {
  f: [fraudulent],
  p: [{ reason: 'product_not_received', stage: 'chargeback', networkReasonCode: '13.1' }],
  q: [{ reason: 'general', stage: 'inquiry', networkReasonCode: '10.4' }],
  // docs/decisions/0044-disputes.md: an inquiry first, then a chargeback of the same payment.
  t: [{ reason: 'general', stage: 'inquiry', networkReasonCode: '10.4' }, fraudulent],
};

const declineByCard: ReadonlyMap<string, DeclineCode> = new Map<string, DeclineCode>([
  [testCards.declined, 'card_declined'],
  [testCards.alwaysDeclined, 'card_declined'],
  [testCards.insufficientFunds, 'insufficient_funds'],
  [testCards.expired, 'expired_card'],
  [testCards.incorrectCvc, 'incorrect_cvc'],
]);

/** Sentences for the merchant and the cardholder; none of them may carry card data. */
const declineMessages: Record<DeclineCode, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  incorrect_cvc: "The card's security code is incorrect.",
  risk_rejected: 'The payment was refused by risk screening.',
  authentication_failed: 'The cardholder did not pass 3-D Secure authentication.',
  processing_error: 'The payment could not be processed.',
};
const mitWithoutCredentialMessage = 'MIT requires a stored credential';
const reversedMessage = 'The payment was reversed by the card issuer';

const highRisk: RiskInfo = { riskScore: 100, riskMessage: 'risk_rejected' };
const maxPassingRiskScore = 30;

/**
 * The processor keeps no state, since several processes may share one database and any of them
 * may resolve a follow-up, capture or refund a payment another one authorized. What those later
 * calls need travels in the reference instead: `sbx_<24 random letters>_<state><follow-up><refunds>`,
 * where state is c (captured), h (held for capture) or d (declined), follow-up is n (none), s
 * (settles later), r (is reversed later) or f, p, q, t (is disputed later: docs/disputes.md), and refunds is a (settle later and succeed), i
 * (succeed at once) or x (settle later and fail: the card is closed). References made before
 * refunds existed have no refunds letter and refund as a. Letters only, so that no reference can
 * contain card digits.
 */
const referencePattern = /^sbx_[a-z]{24}_([chd])([nsrfpqt])([aix]?)$/;
type ReferenceState = 'c' | 'h' | 'd';
type ReferenceFollowUp = 'n' | 's' | 'r' | 'f' | 'p' | 'q' | 't';
type ReferenceRefunds = 'a' | 'i' | 'x';

/**
 * A refund's reference says how it settles: `sbxre_<24 random letters>_<s|f>` (succeeds, fails
 * with card_closed).
 */
const refundReferencePattern = /^sbxre_[a-z]{24}_([sf])$/;

/**
 * The built-in sandbox processor (docs/api.md#sandbox-test-cards): deterministic from the card number, so that the
 * test cards behave the same on every run and in every process.
 */
export function createSandboxProcessor({ followUpDelayMs = 3000 }: { followUpDelayMs?: number } = {}): Processor {
  return {
    name: 'sandbox',
    statelessAuthorize: true,

    async authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
      const number = request.card.number;
      const risk = riskOf(number);
      const decline = (code: DeclineCode, message = declineMessages[code], declineRisk = risk): AuthorizeOutcome => ({
        kind: 'declined',
        processorReference: newReference('d', 'n', 'a'),
        code,
        message,
        risk: declineRisk,
      });

      // docs/api.md#tokenization-rules: a merchant-initiated payment rests on the credential stored by an earlier
      // storing payment; without its network reference the network refuses it.
      if (request.initiator === 'mit' && request.networkTransactionId === null) {
        return decline('processing_error', mitWithoutCredentialMessage);
      }
      if (number === testCards.highRisk) return decline('risk_rejected', declineMessages.risk_rejected, highRisk);

      // docs/api.md#tokenization-rules: MIT never meets 3-D Secure, since the cardholder is absent.
      if (request.initiator !== 'mit') {
        if (request.threeDSecure === 'failed') return decline('authentication_failed');
        const wantsChallenge = number === testCards.threeDSecure || request.threeDSecure === 'requested';
        if (wantsChallenge && request.threeDSecure !== 'passed') return { kind: 'challenge', risk };
      }

      const cardDecline = declineByCard.get(number);
      if (cardDecline !== undefined) return decline(cardDecline);
      if (number === testCards.mitDeclined && request.initiator === 'mit') return decline('card_declined');

      const disputeFlag = disputeFollowUps.get(number);
      const followUpKind: FollowUpKind | null =
        number === testCards.settlesLater
          ? 'settle'
          : number === testCards.reversedLater
            ? 'reverse'
            : disputeFlag !== undefined
              ? 'dispute'
              : null;
      const followUpFlag: ReferenceFollowUp =
        followUpKind === 'settle' ? 's' : followUpKind === 'reverse' ? 'r' : (disputeFlag ?? 'n');
      // CIT and MIT ride on the stored credential's reference; anything else opens a new one.
      const storedReference =
        request.initiator === 'cit' || request.initiator === 'mit' ? request.networkTransactionId : null;
      return {
        kind: 'approved',
        processorReference: newReference(request.capture ? 'c' : 'h', followUpFlag, refundsOf(number)),
        networkTransactionId: storedReference ?? `ntx_${randomLetters(24)}`,
        networkToken: request.initiator === 'first_storing' ? newNetworkToken(number) : null,
        risk,
        captured: request.capture,
        followUp: followUpKind === null ? null : { kind: followUpKind, afterMs: followUpDelayMs },
      };
    },

    async resolveFollowUp(processorReference: string, kind: FollowUpKind): Promise<FollowUpOutcome> {
      const { followUp } = parseReference(processorReference);
      if (kind === 'dispute') {
        const disputes = disputesByFollowUp[followUp];
        if (!disputes) throw new Error(`The sandbox payment ${processorReference} has no pending dispute`);
        return { kind: 'disputed', disputes };
      }
      const expected: ReferenceFollowUp = kind === 'settle' ? 's' : 'r';
      // Asking for a follow-up the authorization never announced is a bug in the caller.
      if (followUp !== expected) throw new Error(`The sandbox payment ${processorReference} has no pending ${kind}`);
      if (kind === 'settle') return { kind: 'succeeded' };
      return { kind: 'reversed', code: 'payment_reversed', message: reversedMessage };
    },

    async completeRedirect(): Promise<AuthorizeOutcome> {
      // The sandbox challenges on a page of Tessera's own ('challenge'), never by a redirect.
      throw new Error('The sandbox never answers an authorization with a redirect');
    },

    async capture({ paymentReference, amount }: CaptureRequest): Promise<CaptureOutcome> {
      const { state } = parseReference(paymentReference);
      if (state === 'd')
        return { kind: 'failed', code: 'processing_error', message: 'There is no authorization to capture.' };
      if (state === 'c')
        return { kind: 'failed', code: 'processing_error', message: 'The payment is already captured.' };
      if (amount < 0n) return { kind: 'failed', code: 'processing_error', message: 'The capture amount is negative.' };
      return { kind: 'captured' };
    },

    async cancel({ paymentReference }: CancelRequest): Promise<void> {
      // Releasing a hold the sandbox never really made needs nothing beyond a well-formed reference.
      parseReference(paymentReference);
    },

    async refund({ paymentReference, amount }: RefundRequest): Promise<RefundOutcome> {
      const { state, refunds } = parseReference(paymentReference);
      // The service refunds only payments that received money; anything else is a bug in the caller.
      if (state === 'd') throw new Error(`The sandbox payment ${paymentReference} was declined: nothing to refund`);
      if (amount <= 0n) throw new Error('A refund amount must be positive');
      if (refunds === 'i') return { kind: 'succeeded', processorReference: newRefundReference('s') };
      return {
        kind: 'accepted',
        processorReference: newRefundReference(refunds === 'x' ? 'f' : 's'),
        followUp: { afterMs: followUpDelayMs },
      };
    },

    async resolveRefund(refundReference: string): Promise<RefundSettlement> {
      const match = refundReferencePattern.exec(refundReference);
      if (!match) throw new Error(`Not a sandbox refund reference: ${refundReference}`);
      return match[1] === 'f' ? { kind: 'failed', reason: 'card_closed' } : { kind: 'succeeded' };
    },
  };
}

/** docs/api.md#sandbox-test-cards: how the refunds of a payment made with this card behave. */
function refundsOf(number: string): ReferenceRefunds {
  if (number === testCards.refundFails) return 'x';
  if (number === testCards.refundSucceedsAtOnce) return 'i';
  return 'a';
}

/** A stable 0–30 score per card, so that the same card shows the same risk on every payment. */
function riskOf(number: string): RiskInfo {
  const digest = createHash('sha256').update(`sandbox-risk:${number}`).digest();
  return { riskScore: digest.readUInt32BE(0) % (maxPassingRiskScore + 1), riskMessage: 'risk_pass' };
}

function newReference(state: ReferenceState, followUp: ReferenceFollowUp, refunds: ReferenceRefunds): string {
  return `sbx_${randomLetters(24)}_${state}${followUp}${refunds}`;
}

function newRefundReference(settles: 's' | 'f'): string {
  return `sbxre_${randomLetters(24)}_${settles}`;
}

function parseReference(processorReference: string): {
  state: ReferenceState;
  followUp: ReferenceFollowUp;
  refunds: ReferenceRefunds;
} {
  const match = referencePattern.exec(processorReference);
  if (!match) throw new Error(`Not a sandbox processor reference: ${processorReference}`);
  return {
    state: match[1] as ReferenceState,
    followUp: match[2] as ReferenceFollowUp,
    refunds: (match[3] || 'a') as ReferenceRefunds,
  };
}

function randomLetters(length: number): string {
  let letters = '';
  for (let index = 0; index < length; index += 1) letters += String.fromCharCode(97 + randomInt(26));
  return letters;
}

/**
 * A network token (DPAN) stands in for the card on the network: 16 digits, the card's first digit
 * so that it routes to the same scheme, a valid Luhn digit like any card number, never the card
 * number itself.
 */
function newNetworkToken(cardNumber: string): string {
  for (;;) {
    let body = cardNumber.slice(0, 1);
    while (body.length < 15) body += String(randomInt(10));
    const token = body + luhnCheckDigit(body);
    if (token !== cardNumber) return token;
  }
}

function luhnCheckDigit(body: string): string {
  let sum = 0;
  for (let index = 0; index < body.length; index += 1) {
    // The check digit will sit to the right, so the rightmost digit of the body is doubled.
    let digit = Number(body[body.length - 1 - index]);
    if (index % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return String((10 - (sum % 10)) % 10);
}
