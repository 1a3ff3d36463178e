/**
 * What the stand-in for Adyen (test/helpers/adyen-stand-in.ts) answers per card number, and the
 * small pieces of Adyen's answers it builds (docs/processors-adyen.md, Testing).
 */

import { randomInt } from 'node:crypto';

/** Test cards and what the stand-in answers for them; any other number is authorised. */
export const adyenTestCards = {
  approved: '4111111111111111',
  refused: '4000000000000002',
  notEnoughBalance: '4000000000009995',
  expired: '4000000000000069',
  cvcDeclined: '4000000000000127',
  fraud: '4000000000004954',
  issuerSuspectedFraud: '4000000000000101',
  acquirerError: '4000000000000119',
  threeDSecure: '4000002500003155',
  threeDSecureFails: '4000002760003184',
  threeDSecureFormPost: '4000000000003220',
  nativeThreeDSecure: '4000000000003063',
  received: '4000000000000630',
} as const;

export const refusals: ReadonlyMap<string, { resultCode: string; reason: string; code: string; score?: number }> =
  new Map([
    [adyenTestCards.refused, { resultCode: 'Refused', reason: 'Refused', code: '2' }],
    [adyenTestCards.notEnoughBalance, { resultCode: 'Refused', reason: 'Not enough balance', code: '12' }],
    [adyenTestCards.expired, { resultCode: 'Refused', reason: 'Expired Card', code: '6' }],
    [adyenTestCards.cvcDeclined, { resultCode: 'Refused', reason: 'CVC Declined', code: '24' }],
    [adyenTestCards.fraud, { resultCode: 'Refused', reason: 'FRAUD', code: '20', score: 100 }],
    [adyenTestCards.issuerSuspectedFraud, { resultCode: 'Refused', reason: 'Issuer Suspected Fraud', code: '31' }],
    [adyenTestCards.acquirerError, { resultCode: 'Error', reason: 'Acquirer Error', code: '4' }],
  ]);

export function pspReference(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  let reference = '';
  for (let index = 0; index < 16; index += 1) reference += alphabet[randomInt(alphabet.length)];
  return reference;
}

export function networkReference(): string {
  return String(randomInt(100_000, 999_999)) + String(randomInt(100_000_000, 999_999_999));
}

export function serviceError(status: number, errorCode: string, message: string): Record<string, unknown> {
  return { status, errorCode, message, errorType: status >= 500 ? 'internal' : 'validation' };
}
