/**
 * The Adyen connector (Checkout API v71) behind Tessera's processor interface
 * (docs/processors-adyen.md). It keeps no state: what a later call needs (the pspReference) is the
 * payment's processor reference.
 */

import type {
  AuthorizeOutcome,
  AuthorizeRequest,
  CancelRequest,
  CaptureOutcome,
  CaptureRequest,
  CompleteRedirectRequest,
  FollowUpOutcome,
  LiveProcessor,
  RefundOutcome,
  RefundRequest,
  RefundSettlement,
} from '../processor.js';
import { createAdyenClient } from './client.js';
import { createAdyenDisputes } from './disputes.js';
import { parseAdyenNotification } from './notifications.js';
import { authorizeOutcomeOf, receivedReferenceOf } from './outcomes.js';
import { cancelBody, captureBody, detailsBody, modificationPath, paymentBody, refundBody } from './requests.js';

export { AdyenRequestFailed } from './client.js';

/** Adyen's test environment; a live account has its own prefix URL, which the caller gives. */
export const adyenTestBaseUrl = 'https://checkout-test.adyen.com/v71';
export const adyenTestDisputesBaseUrl = 'https://ca-test.adyen.com/ca/services/DisputeService/v30';

export interface AdyenProcessorOptions {
  apiKey: string;
  merchantAccount: string;
  /** The hex HMAC key of the account's standard notification webhook. */
  hmacKey: string;
  baseUrl?: string;
  /** The Disputes API's root (docs/processors-adyen.md, Disputes); Adyen's test one unless given. */
  disputesBaseUrl?: string;
  timeoutMs: number;
}

/**
 * What is wrong with an account's Adyen credentials, as the field and the rule, or null. The HMAC
 * key is decoded from hexadecimal digits: a key that is not hexadecimal would decode to fewer
 * bytes (or none) and make signatures easy to forge, so it is refused, never used. Messages never
 * quote a credential.
 */
export function adyenCredentialsProblem(credentials: {
  apiKey: string;
  merchantAccount: string;
  hmacKey: string;
}): { field: 'apiKey' | 'merchantAccount' | 'hmacKey'; message: string } | null {
  if (credentials.apiKey.trim() === '') return { field: 'apiKey', message: 'must not be empty' };
  if (credentials.merchantAccount.trim() === '') return { field: 'merchantAccount', message: 'must not be empty' };
  if (!/^(?:[0-9a-fA-F]{2}){16,}$/.test(credentials.hmacKey)) {
    return { field: 'hmacKey', message: 'must be hexadecimal digits, at least 32 (Adyen shows 64)' };
  }
  return null;
}

export function createAdyenProcessor({
  apiKey,
  merchantAccount,
  hmacKey,
  baseUrl = adyenTestBaseUrl,
  disputesBaseUrl = adyenTestDisputesBaseUrl,
  timeoutMs,
}: AdyenProcessorOptions): LiveProcessor {
  const problem = adyenCredentialsProblem({ apiKey, merchantAccount, hmacKey });
  if (problem) throw new Error(`The Adyen credentials' ${problem.field} ${problem.message}`);
  const client = createAdyenClient({ apiKey, baseUrl, timeoutMs });
  const account = { merchantAccount };
  const disputes = createAdyenDisputes(
    createAdyenClient({ apiKey, baseUrl: disputesBaseUrl, timeoutMs }),
    merchantAccount,
  );

  return {
    name: 'adyen',
    // Adyen remembers an authorisation Tessera may never record: the payment is written first.
    statelessAuthorize: false,

    async authorize(request: AuthorizeRequest): Promise<AuthorizeOutcome> {
      const answer = await client.post('/payments', paymentBody(account, request), request.idempotencyKey);
      return authorizeOutcomeOf(answer, request.capture, 'POST /payments');
    },

    async completeRedirect(request: CompleteRedirectRequest): Promise<AuthorizeOutcome> {
      const answer = await client.post('/payments/details', detailsBody(request), request.idempotencyKey);
      // Adyen's details answer does not repeat whether the payment was a pre-authorization, and the
      // request does not carry it: `captured` is reported true, and the caller goes by the
      // payment's own pre-authorization flag (docs/processors-adyen.md, 3-D Secure).
      return authorizeOutcomeOf(answer, true, 'POST /payments/details');
    },

    async resolveFollowUp(processorReference: string): Promise<FollowUpOutcome> {
      // Adyen tells later changes by notifications; it never answers with a sandbox follow-up.
      throw new Error(`Adyen announces no follow-up: nothing to resolve for ${processorReference}`);
    },

    async capture(request: CaptureRequest): Promise<CaptureOutcome> {
      const path = modificationPath(request.paymentReference, 'captures');
      receivedReferenceOf(
        await client.post(path, captureBody(account, request), request.idempotencyKey),
        `POST ${path}`,
      );
      // Adyen confirms a capture by a CAPTURE notification.
      return { kind: 'pending' };
    },

    async cancel(request: CancelRequest): Promise<void> {
      const path = modificationPath(request.paymentReference, 'cancels');
      receivedReferenceOf(
        await client.post(path, cancelBody(account, request.paymentId), request.idempotencyKey),
        `POST ${path}`,
      );
    },

    async refund(request: RefundRequest): Promise<RefundOutcome> {
      const path = modificationPath(request.paymentReference, 'refunds');
      const answer = await client.post(path, refundBody(account, request), request.idempotencyKey);
      // A REFUND (or REFUND_FAILED) notification settles it.
      return { kind: 'accepted', processorReference: receivedReferenceOf(answer, `POST ${path}`), followUp: null };
    },

    async resolveRefund(): Promise<RefundSettlement> {
      // The Checkout API has no refund lookup: the notification is the only source of the outcome.
      return { kind: 'pending' };
    },

    parseNotification({ rawBody }) {
      return parseAdyenNotification(rawBody, { hmacKey, merchantAccount });
    },

    submitDisputeEvidence: (request) => disputes.submit(request),
    acceptDispute: (request) => disputes.accept(request),
  };
}
