/**
 * Answers to Stripe disputes (docs/processors-stripe.md, Disputes): each evidence file uploaded
 * (`files.create`, purpose dispute_evidence), then the evidence with `submit: true`
 * (`disputes.update`); accepting is `disputes.close`. Every call carries an idempotency key
 * derived from the submission's, so that a retry after a failure sends nothing twice.
 */

import type Stripe from 'stripe';
import type { DisputeResponseRequest, SubmitDisputeEvidenceRequest } from '../processor.js';
import { stripeFailure, withoutCallSite } from './client.js';

/** Tessera's evidence field names (docs/disputes.md, Evidence) and Stripe's. */
const stripeFields: Record<string, keyof Stripe.DisputeUpdateParams.Evidence> = {
  productDescription: 'product_description',
  customerName: 'customer_name',
  customerEmailAddress: 'customer_email_address',
  billingAddress: 'billing_address',
  shippingAddress: 'shipping_address',
  shippingCarrier: 'shipping_carrier',
  shippingTrackingNumber: 'shipping_tracking_number',
  shippingDate: 'shipping_date',
  refundPolicyDisclosure: 'refund_policy_disclosure',
  refundRefusalExplanation: 'refund_refusal_explanation',
  cancellationPolicyDisclosure: 'cancellation_policy_disclosure',
  duplicateChargeExplanation: 'duplicate_charge_explanation',
  uncategorizedText: 'uncategorized_text',
  receipt: 'receipt',
  customerCommunication: 'customer_communication',
  shippingDocumentation: 'shipping_documentation',
  refundPolicy: 'refund_policy',
  cancellationPolicy: 'cancellation_policy',
  serviceDocumentation: 'service_documentation',
  uncategorizedFile: 'uncategorized_file',
};

const mediaTypes = { pdf: 'application/pdf', png: 'image/png', jpg: 'image/jpeg' } as const;

function stripeField(field: string): keyof Stripe.DisputeUpdateParams.Evidence {
  const name = stripeFields[field];
  if (name === undefined) throw new Error(`No Stripe evidence field for ${field}`);
  return name;
}

export function createStripeDisputes(stripe: Stripe) {
  return {
    async submit(request: SubmitDisputeEvidenceRequest): Promise<void> {
      const evidence: Record<string, string> = {};
      for (const [field, value] of Object.entries(request.text)) evidence[stripeField(field)] = value;
      for (const file of request.files) {
        let uploaded: Stripe.File;
        try {
          uploaded = await withoutCallSite(() =>
            stripe.files.create(
              {
                purpose: 'dispute_evidence',
                file: { data: file.contents, name: file.filename, type: mediaTypes[file.type] },
              },
              { idempotencyKey: `${request.idempotencyKey}.${file.field}` },
            ),
          );
        } catch (caught) {
          throw stripeFailure('file upload', caught);
        }
        evidence[stripeField(file.field)] = uploaded.id;
      }
      try {
        await withoutCallSite(() =>
          stripe.disputes.update(
            request.disputeReference,
            { evidence: evidence as Stripe.DisputeUpdateParams.Evidence, submit: true },
            { idempotencyKey: request.idempotencyKey },
          ),
        );
      } catch (caught) {
        throw stripeFailure('dispute update', caught);
      }
    },

    async accept(request: DisputeResponseRequest): Promise<void> {
      try {
        await withoutCallSite(() =>
          stripe.disputes.close(request.disputeReference, {}, { idempotencyKey: request.idempotencyKey }),
        );
      } catch (caught) {
        throw stripeFailure('dispute close', caught);
      }
    },
  };
}
