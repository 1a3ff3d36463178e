import type { Queryable } from '../db/db.js';
import { selectPage, type PageRequest } from '../db/pagination.js';
import type { BillingDetailsOut } from './schemas.js';

/** A payment_methods row without its ciphertexts: what answering the API object needs. */
export interface PaymentMethodRow {
  id: string;
  merchant_id: string;
  mode: string;
  type: string;
  customer_id: string | null;
  billing_details: BillingDetailsOut | null;
  merchant_pay_site: string | null;
  card_brand: string;
  card_country: string;
  card_exp_month: string;
  card_exp_year: string;
  card_last4: string;
  card_fingerprint: string;
  token_type: string | null;
  network_transaction_id: string | null;
  stored_at: Date | null;
  detached_at: Date | null;
  created_at: Date;
}

/** The vault ciphertexts of a row; read only to make a payment. */
export interface PaymentMethodSecretsRow extends PaymentMethodRow {
  card_number_encrypted: string;
  security_code_encrypted: string | null;
}

const columns =
  'id, merchant_id, mode, type, customer_id, billing_details, merchant_pay_site, card_brand, card_country, ' +
  'card_exp_month, card_exp_year, card_last4, card_fingerprint, token_type, network_transaction_id, stored_at, ' +
  'detached_at, created_at';

export async function insertPaymentMethod(
  db: Queryable,
  row: PaymentMethodRow & { card_number_encrypted: string; security_code_encrypted: string | null },
): Promise<void> {
  await db.query(
    `INSERT INTO payment_methods (id, merchant_id, mode, type, customer_id, billing_details, merchant_pay_site,
       card_brand, card_country, card_exp_month, card_exp_year, card_last4, card_fingerprint,
       card_number_encrypted, security_code_encrypted, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.type,
      row.customer_id,
      row.billing_details === null ? null : JSON.stringify(row.billing_details),
      row.merchant_pay_site,
      row.card_brand,
      row.card_country,
      row.card_exp_month,
      row.card_exp_year,
      row.card_last4,
      row.card_fingerprint,
      row.card_number_encrypted,
      row.security_code_encrypted,
      row.created_at,
    ],
  );
}

export async function selectPaymentMethod(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<PaymentMethodRow | undefined> {
  const [row] = await db.query<PaymentMethodRow>(
    `SELECT ${columns} FROM payment_methods WHERE id = $1 AND merchant_id = $2 AND mode = $3`,
    [id, merchantId, mode],
  );
  return row;
}

export async function selectPaymentMethodSecrets(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<PaymentMethodSecretsRow | undefined> {
  const [row] = await db.query<PaymentMethodSecretsRow>(
    `SELECT ${columns}, card_number_encrypted, security_code_encrypted
     FROM payment_methods WHERE id = $1 AND merchant_id = $2 AND mode = $3`,
    [id, merchantId, mode],
  );
  return row;
}

/**
 * A payment's two reads in one statement: the method with its secrets (or none), and whether
 * `customerId` (when given) names a live customer of the merchant.
 */
export async function selectPaymentMethodSecretsWithCustomer(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
  customerId: string | null,
): Promise<{ method: PaymentMethodSecretsRow | undefined; customerExists: boolean }> {
  const [row] = await db.query<PaymentMethodSecretsRow & { found_method: boolean; customer_exists: boolean }>(
    // The customer is found by its primary key alone, as in selectOwnRowById (db/by-id.ts).
    `SELECT method.*, method.id IS NOT NULL AS found_method,
       ($4::text IS NULL OR EXISTS (
         SELECT 1 FROM (SELECT merchant_id, mode, deleted_at FROM customers WHERE id = $4 OFFSET 0) AS customer
         WHERE customer.merchant_id = $2 AND customer.mode = $3 AND customer.deleted_at IS NULL)) AS customer_exists
     FROM (SELECT 1) AS one
     LEFT JOIN (SELECT ${columns}, card_number_encrypted, security_code_encrypted FROM payment_methods
                WHERE id = $1 AND merchant_id = $2 AND mode = $3) AS method ON true`,
    [id, merchantId, mode, customerId],
  );
  if (!row) throw new Error('The payment inputs query answered no row');
  const { found_method: foundMethod, customer_exists: customerExists, ...method } = row;
  return { method: foundMethod ? method : undefined, customerExists };
}

/** Writes the fields an update may change; the service has merged the change into the current row. */
export async function updatePaymentMethodDetails(
  db: Queryable,
  row: PaymentMethodRow,
  now: Date,
): Promise<PaymentMethodRow | undefined> {
  const [updated] = await db.query<PaymentMethodRow>(
    `UPDATE payment_methods SET billing_details = $4, merchant_pay_site = $5, card_exp_month = $6,
       card_exp_year = $7, updated_at = $8
     WHERE id = $1 AND merchant_id = $2 AND mode = $3 AND detached_at IS NULL RETURNING ${columns}`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.billing_details === null ? null : JSON.stringify(row.billing_details),
      row.merchant_pay_site,
      row.card_exp_month,
      row.card_exp_year,
      now,
    ],
  );
  return updated;
}

/**
 * Attaches the method to a customer. Conditional, because a concurrent attach, storing payment or
 * detach may have changed the row since it was read: zero rows means the caller lost that race.
 * The customer row is locked (FOR SHARE) in the same statement, so a concurrent deletion of the
 * customer either waits for this attach to commit, and then detaches the method with the
 * customer's others, or commits first, and then this statement finds no live customer and
 * attaches nothing: a method is never left attached to a deleted customer.
 */
export async function attachPaymentMethod(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
  customerId: string,
  now: Date,
): Promise<PaymentMethodRow | undefined> {
  const [row] = await db.query<PaymentMethodRow>(
    `UPDATE payment_methods SET customer_id = $4, updated_at = $5
     WHERE id = $1 AND merchant_id = $2 AND mode = $3 AND detached_at IS NULL AND customer_id IS NULL
       AND EXISTS (SELECT 1 FROM customers
                   WHERE customers.id = $4 AND customers.merchant_id = $2 AND customers.mode = $3
                     AND customers.deleted_at IS NULL
                   FOR SHARE)
     RETURNING ${columns}`,
    [id, merchantId, mode, customerId, now],
  );
  return row;
}

/** docs/api.md#tokenization-rules and Stripe: a detached method loses its customer and its stored credential for good. */
const detachChanges = (now: string) =>
  `detached_at = ${now}, customer_id = NULL, token_type = NULL, network_token_encrypted = NULL,
   network_transaction_id = NULL, stored_at = NULL, security_code_encrypted = NULL, updated_at = ${now}`;

/** Detaches one attached method; conditional so that of two concurrent detaches only one wins. */
export async function detachPaymentMethod(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
  now: Date,
): Promise<PaymentMethodRow | undefined> {
  const [row] = await db.query<PaymentMethodRow>(
    `UPDATE payment_methods SET ${detachChanges('$4')}
     WHERE id = $1 AND merchant_id = $2 AND mode = $3 AND detached_at IS NULL AND customer_id IS NOT NULL
     RETURNING ${columns}`,
    [id, merchantId, mode, now],
  );
  return row;
}

/** The customer's card most recently bound by a storing payment and not detached, or undefined. */
export async function selectLatestStoredOfCustomer(
  db: Queryable,
  merchantId: string,
  mode: string,
  customerId: string,
): Promise<string | undefined> {
  const [row] = await db.query<{ id: string }>(
    `SELECT id FROM payment_methods
     WHERE customer_id = $1 AND merchant_id = $2 AND mode = $3 AND stored_at IS NOT NULL AND detached_at IS NULL
     ORDER BY stored_at DESC, id DESC LIMIT 1`,
    [customerId, merchantId, mode],
  );
  return row?.id;
}

export async function detachPaymentMethodsOfCustomer(
  db: Queryable,
  merchantId: string,
  mode: string,
  customerId: string,
  now: Date,
): Promise<number> {
  const rows = await db.query(
    `UPDATE payment_methods SET ${detachChanges('$4')}
     WHERE customer_id = $1 AND merchant_id = $2 AND mode = $3 AND detached_at IS NULL
     RETURNING id`,
    [customerId, merchantId, mode, now],
  );
  return rows.length;
}

/**
 * Binds the stored credential of a successful storing payment (docs/api.md#tokenization-rules). Conditional, because
 * two storing payments with the same method and different customers may run at once: only the
 * first to commit binds it, the other finds the method bound to someone else (zero rows) and
 * must not overwrite that binding. A detached method is never bound again.
 * A later storing payment of the same pair (a CIT with setupFutureUsage=on) provisions no new
 * network token: the one already stored, and the time the credential was first stored, are kept.
 * The security code, which served the first authorization, is erased in the same statement.
 */
export async function bindStoredCredential(
  db: Queryable,
  merchantId: string,
  mode: string,
  input: {
    id: string;
    customerId: string;
    networkTransactionId: string;
    networkTokenEncrypted: string | null;
    now: Date;
  },
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE payment_methods SET customer_id = $4, network_transaction_id = $5,
       network_token_encrypted = COALESCE($6::text, network_token_encrypted),
       token_type = CASE WHEN COALESCE($6::text, network_token_encrypted) IS NULL THEN NULL ELSE 'network_token' END,
       stored_at = COALESCE(stored_at, $7), updated_at = $7, security_code_encrypted = NULL
     WHERE id = $1 AND merchant_id = $2 AND mode = $3 AND detached_at IS NULL
       AND (customer_id IS NULL OR customer_id = $4)
     RETURNING id`,
    [input.id, merchantId, mode, input.customerId, input.networkTransactionId, input.networkTokenEncrypted, input.now],
  );
  return rows.length > 0;
}

export async function clearSecurityCode(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query(
    'UPDATE payment_methods SET security_code_encrypted = NULL, updated_at = $2 WHERE id = $1 AND security_code_encrypted IS NOT NULL',
    [id, now],
  );
}

export async function selectCustomerPaymentMethodPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  customerId: string,
  page: PageRequest,
) {
  const where = ['customer_id = $1', 'merchant_id = $2', 'mode = $3', 'detached_at IS NULL'];
  return selectPage<PaymentMethodRow>(
    db,
    { table: 'payment_methods', columns, where, params: [customerId, merchantId, mode] },
    page,
  );
}

/** The card holders of these payment methods of the merchant (billing name and e-mail), for the dashboard's lists. */
export async function selectBillingPeople(
  db: Queryable,
  merchantId: string,
  mode: string,
  ids: readonly string[],
): Promise<Array<{ id: string; name: string | null; email: string | null }>> {
  if (ids.length === 0) return [];
  return db.query(
    `SELECT id, nullif(concat_ws(' ', billing_details ->> 'firstName', billing_details ->> 'lastName'), '') AS name,
            billing_details ->> 'email' AS email
       FROM payment_methods WHERE id = ANY($3) AND merchant_id = $1 AND mode = $2`,
    [merchantId, mode, ids],
  );
}
