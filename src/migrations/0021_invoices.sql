-- Invoices (docs/api.md#invoices): a bill to a customer, draft → open → paid | uncollectible | void.

CREATE TABLE invoices (
  id                    text PRIMARY KEY,
  merchant_id           text NOT NULL REFERENCES merchants (id),
  mode                  text NOT NULL,
  customer_id           text NOT NULL REFERENCES customers (id),
  currency              text NOT NULL,
  -- [{description, amount (unit price, minor units, digits as text), quantity}]
  line_items            jsonb NOT NULL,
  -- Per merchant and mode, e.g. ACME-0001; assigned when the invoice is finalized.
  number                text,
  -- The sum of quantity × amount over the line items, fixed at finalize.
  amount_due            bigint NOT NULL CHECK (amount_due > 0),
  amount_paid           bigint NOT NULL DEFAULT 0 CHECK (amount_paid >= 0),
  amount_remaining      bigint NOT NULL CHECK (amount_remaining >= 0),
  collection_method     text NOT NULL CHECK (collection_method IN ('charge_automatically', 'send_invoice')),
  days_until_due        integer,
  due_date              timestamptz,
  payment_method_id     text REFERENCES payment_methods (id),
  description           text,
  metadata              jsonb,
  status                text NOT NULL CHECK (status IN ('draft', 'open', 'paid', 'uncollectible', 'void')),
  -- The payment that paid the invoice, or the latest attempt while it is unpaid.
  payment_id            text,
  -- A payment of this invoice that may still succeed (processing, awaiting 3-D Secure): while it
  -- is set no second payment starts and the invoice cannot be voided, so it is never paid twice.
  pending_payment_id    text,
  attempt_count         integer NOT NULL DEFAULT 0,
  -- When the next automatic collection attempt is due (charge_automatically), else null.
  next_payment_attempt  timestamptz,
  last_error_code       text,
  last_error_message    text,
  finalized_at          timestamptz,
  paid_at               timestamptz,
  voided_at             timestamptz,
  marked_uncollectible_at timestamptz,
  created_at            timestamptz NOT NULL,
  updated_at            timestamptz NOT NULL
);
CREATE INDEX invoices_list ON invoices (merchant_id, mode, created_at DESC, id DESC);
CREATE INDEX invoices_customer ON invoices (merchant_id, mode, customer_id, created_at DESC, id DESC);
CREATE INDEX invoices_status ON invoices (merchant_id, mode, status, created_at DESC, id DESC);
CREATE UNIQUE INDEX invoices_number ON invoices (merchant_id, mode, number) WHERE number IS NOT NULL;

-- The invoice number counter of each merchant and mode. Finalization increments it with one
-- UPDATE … RETURNING in its own transaction: the row lock orders two finalizations, so they never
-- share a number, and a finalization that rolls back gives its number back.
CREATE TABLE invoice_numbering (
  merchant_id  text NOT NULL REFERENCES merchants (id),
  mode         text NOT NULL,
  -- From the merchant's name when its first invoice was finalized (ACME for "Acme Ltd").
  prefix       text NOT NULL,
  last_number  bigint NOT NULL,
  PRIMARY KEY (merchant_id, mode)
);
