/**
 * Adyen's answers as Tessera outcomes (docs/processors-adyen.md, Outcomes and Declines). An answer
 * the connector does not understand throws: the caller then treats the outcome as unknown.
 */

import type { AuthorizeOutcome, DeclineCode, RedirectAction, RiskInfo } from '../processor.js';
import { AdyenRequestFailed, type AdyenAnswer } from './client.js';

/** Sentences for the merchant and the cardholder; none of them carries card data. */
export const declineMessages: Record<DeclineCode, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  incorrect_cvc: "The card's security code is incorrect.",
  risk_rejected: 'The payment was refused by risk screening.',
  authentication_failed: 'The cardholder did not pass 3-D Secure authentication.',
  processing_error: 'The payment could not be processed.',
};

/**
 * Adyen's refusalReasonCode → decline code. The code is stable where the wording of refusalReason
 * is not; the wording is the fallback when a code is missing (notifications carry only the reason).
 */
const declineByReasonCode: ReadonlyMap<string, DeclineCode> = new Map<string, DeclineCode>([
  ['4', 'processing_error'], // Acquirer Error
  ['6', 'expired_card'], // Expired Card
  ['9', 'processing_error'], // Issuer Unavailable
  ['11', 'authentication_failed'], // 3D Not Authenticated
  ['12', 'insufficient_funds'], // Not enough balance
  ['14', 'risk_rejected'], // Acquirer Fraud
  ['20', 'risk_rejected'], // FRAUD
  ['22', 'risk_rejected'], // FRAUD-CANCELLED
  ['24', 'incorrect_cvc'], // CVC Declined
  ['31', 'risk_rejected'], // Issuer Suspected Fraud
  ['38', 'authentication_failed'], // Authentication required
  ['42', 'authentication_failed'], // 3DS Authentication Error
]);

const declineByReason: ReadonlyMap<string, DeclineCode> = new Map<string, DeclineCode>([
  ['acquirer error', 'processing_error'],
  ['expired card', 'expired_card'],
  ['issuer unavailable', 'processing_error'],
  ['3d not authenticated', 'authentication_failed'],
  ['not enough balance', 'insufficient_funds'],
  ['acquirer fraud', 'risk_rejected'],
  ['fraud', 'risk_rejected'],
  ['fraud-cancelled', 'risk_rejected'],
  ['cvc declined', 'incorrect_cvc'],
  ['issuer suspected fraud', 'risk_rejected'],
  ['authentication required', 'authentication_failed'],
  ['3ds authentication error', 'authentication_failed'],
]);

/**
 * Every other refusal is `card_declined`. Where the card itself was not refused but the payment
 * could not be processed ("Acquirer Error", "Issuer Unavailable", or resultCode Error with a
 * reason not in the tables) it is `processing_error`, whose message asks the shopper to try again.
 * The whole table: docs/processors-adyen.md, Declines.
 */
export function declineCodeOf(
  refusalReason: string | null,
  refusalReasonCode: string | null,
  resultCode: string | null,
): DeclineCode {
  const byCode = refusalReasonCode === null ? undefined : declineByReasonCode.get(refusalReasonCode);
  if (byCode !== undefined) return byCode;
  const byReason = refusalReason === null ? undefined : declineByReason.get(refusalReason.trim().toLowerCase());
  if (byReason !== undefined) return byReason;
  return resultCode === 'Error' ? 'processing_error' : 'card_declined';
}

/** Adyen's account score (0 when Adyen sent none: risk screening is Adyen's, not Tessera's). */
export function riskOf(answer: AdyenAnswer): RiskInfo {
  const fraudResult = answer.fraudResult as { accountScore?: unknown } | undefined;
  const score = typeof fraudResult?.accountScore === 'number' ? fraudResult.accountScore : 0;
  return { riskScore: score, riskMessage: 'adyen_account_score' };
}

function stringField(answer: Record<string, unknown> | undefined, name: string): string | null {
  const value = answer?.[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

function additionalDataOf(answer: AdyenAnswer): Record<string, unknown> | undefined {
  const data = answer.additionalData;
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : undefined;
}

function notUnderstood(operation: string, what: string): AdyenRequestFailed {
  return new AdyenRequestFailed(`Adyen ${operation} answered 200 with ${what}`, 200, null);
}

/**
 * An authorisation's answer (`/payments` or `/payments/details`) as an outcome. `capture` is what
 * the request asked: an Authorised payment asked with capture is taken as captured (an account
 * with delayed capture would confirm it by a CAPTURE notification later).
 */
export function authorizeOutcomeOf(answer: AdyenAnswer, capture: boolean, operation: string): AuthorizeOutcome {
  const resultCode = stringField(answer, 'resultCode');
  const pspReference = stringField(answer, 'pspReference');
  const risk = riskOf(answer);
  switch (resultCode) {
    case 'Authorised': {
      if (pspReference === null) throw notUnderstood(operation, 'Authorised without a pspReference');
      return {
        kind: 'approved',
        processorReference: pspReference,
        networkTransactionId: stringField(additionalDataOf(answer), 'networkTxReference') ?? pspReference,
        networkToken: null,
        risk,
        captured: capture,
        followUp: null,
      };
    }
    case 'Refused':
    case 'Error':
    case 'Cancelled': {
      const refusalReason = stringField(answer, 'refusalReason');
      const code = declineCodeOf(refusalReason, stringField(answer, 'refusalReasonCode'), resultCode);
      return {
        kind: 'declined',
        // A payment refused before Adyen registered it has no pspReference; the payment keeps none.
        processorReference: pspReference ?? '',
        code,
        message: declineMessages[code],
        risk,
        processorReason: refusalReason ?? resultCode,
      };
    }
    case 'RedirectShopper':
    case 'IdentifyShopper':
    case 'ChallengeShopper': {
      const action = answer.action as Record<string, unknown> | undefined;
      const type = stringField(action, 'type');
      if (type !== null && type !== 'redirect') {
        // Native 3-D Secure (threeDS2, sdk, …) needs Adyen's script on the shopper's page, which
        // Tessera's pages do not load. Nothing is authorised before authentication, so the payment
        // fails at once (the shopper may try again) rather than waiting for a step nobody can take.
        return {
          kind: 'declined',
          processorReference: pspReference ?? '',
          code: 'processing_error',
          message: declineMessages.processing_error,
          risk,
          processorReason: `${resultCode} with a ${type} action, which Tessera cannot show`,
        };
      }
      return { kind: 'redirect', processorReference: pspReference, action: redirectActionOf(action, operation), risk };
    }
    case 'Received':
    case 'Pending':
    case 'PresentToShopper':
      return { kind: 'pending', processorReference: pspReference, risk };
    default:
      throw notUnderstood(operation, `resultCode ${resultCode ?? 'missing'}`);
  }
}

/** A `redirect` action, the one kind a browser Tessera sends away can follow; a malformed one is not understood. */
function redirectActionOf(action: Record<string, unknown> | undefined, operation: string): RedirectAction {
  if (stringField(action, 'type') === null) throw notUnderstood(operation, 'a redirect result without an action');
  const url = stringField(action, 'url');
  if (url === null || !/^https?:\/\//.test(url)) throw notUnderstood(operation, 'a redirect action without a URL');
  const method = (stringField(action, 'method') ?? 'GET').toUpperCase();
  if (method !== 'GET' && method !== 'POST') throw notUnderstood(operation, `a redirect action with method ${method}`);
  const data: Record<string, string> = {};
  const rawData = action?.data;
  if (typeof rawData === 'object' && rawData !== null) {
    for (const [name, value] of Object.entries(rawData)) if (typeof value === 'string') data[name] = value;
  }
  return { url, method, data: method === 'GET' ? {} : data };
}

/** A modification (capture, cancel, refund) is answered `status: received` and confirmed by a notification. */
export function receivedReferenceOf(answer: AdyenAnswer, operation: string): string {
  if (answer.status !== 'received') throw notUnderstood(operation, `status ${String(answer.status ?? 'missing')}`);
  const pspReference = stringField(answer, 'pspReference');
  if (pspReference === null) throw notUnderstood(operation, 'no pspReference');
  return pspReference;
}
