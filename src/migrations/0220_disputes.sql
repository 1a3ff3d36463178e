-- Disputes and chargebacks (docs/disputes.md, docs/decisions/0044-disputes.md): the dispute, the
-- evidence files merchants upload for it, and what a payment has disputed.

CREATE TABLE disputes (
  id                    text PRIMARY KEY,
  merchant_id           text NOT NULL,
  mode                  text NOT NULL,
  payment_id            text NOT NULL,
  -- Minor units: what the dispute takes back if lost (0 for an inquiry whose payment was refunded).
  amount                bigint NOT NULL CHECK (amount >= 0),
  currency              text NOT NULL,
  reason                text NOT NULL CHECK (reason IN ('fraudulent', 'product_not_received',
                          'product_unacceptable', 'duplicate', 'subscription_canceled',
                          'credit_not_processed', 'general')),
  network_reason_code   text,
  stage                 text NOT NULL CHECK (stage IN ('inquiry', 'chargeback', 'pre_arbitration')),
  status                text NOT NULL CHECK (status IN ('warning_needs_response', 'warning_under_review',
                          'warning_closed', 'needs_response', 'under_review', 'won', 'lost', 'accepted')),
  -- The staged evidence: text fields and file ids (docs/disputes.md, Evidence).
  evidence              jsonb NOT NULL,
  due_by                timestamptz NOT NULL,
  submission_count      integer NOT NULL DEFAULT 0,
  -- What the dispute holds of its payment's amount_disputed (a chargeback's amount until it is won).
  amount_held           bigint NOT NULL DEFAULT 0 CHECK (amount_held >= 0),
  -- A live dispute's processor account and the processor's own reference of it; null in the sandbox.
  processor_account_id  text,
  processor_reference   text,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
-- A processor's dispute is recorded once, however often it is notified.
CREATE UNIQUE INDEX disputes_processor_reference ON disputes (processor_account_id, processor_reference)
  WHERE processor_reference IS NOT NULL;
CREATE INDEX disputes_list ON disputes (merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX disputes_payment ON disputes (payment_id, created_at);

-- Files a merchant uploads (evidence): kept in the database, outside the vault; served only to
-- their merchant in their mode.
CREATE TABLE files (
  id           text PRIMARY KEY,
  merchant_id  text NOT NULL,
  mode         text NOT NULL,
  purpose      text NOT NULL CHECK (purpose IN ('dispute_evidence')),
  type         text NOT NULL CHECK (type IN ('pdf', 'png', 'jpg')),
  size         integer NOT NULL CHECK (size > 0 AND size <= 5242880),
  filename     text NOT NULL,
  contents     bytea NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX files_list ON files (merchant_id, mode, created_at DESC, id DESC);

-- What chargebacks hold of a payment: refunds reserve only what is neither refunded, under way
-- nor disputed. dispute_ids lists the payment's disputes, oldest first, for the payment object.
ALTER TABLE payments ADD COLUMN amount_disputed bigint NOT NULL DEFAULT 0 CHECK (amount_disputed >= 0);
ALTER TABLE payments ADD COLUMN dispute_ids text[] NOT NULL DEFAULT '{}';
ALTER TABLE payments ADD CONSTRAINT payments_disputed_within_received
  CHECK (amount_refunded + amount_refund_pending + amount_disputed <= amount_received);
