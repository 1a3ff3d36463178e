import { ownRowCondition, selectOwnRowById } from '../db/by-id.js';
import type { Queryable } from '../db/db.js';
import { listFilter, selectPage, type PageRequest, type CreatedRange } from '../db/pagination.js';
import type { AddressOut, ShippingOut } from '../core/common-schemas.js';

/** The customer with id $1 of merchant $2 in mode $3, by its primary key (db/by-id.ts). */
const ownCustomer = ownRowCondition('customers', '$1', '$2', '$3');

export interface CustomerRow {
  id: string;
  merchant_id: string;
  mode: string;
  merchant_user_id: string | null;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  description: string | null;
  address: AddressOut | null;
  shipping: ShippingOut | null;
  created_at: Date;
}

const columns =
  'id, merchant_id, mode, merchant_user_id, email, first_name, last_name, phone, description, address, shipping, created_at';

export async function insertCustomer(db: Queryable, row: CustomerRow): Promise<void> {
  await db.query(
    `INSERT INTO customers (${columns}, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.merchant_user_id,
      row.email,
      row.first_name,
      row.last_name,
      row.phone,
      row.description,
      row.address === null ? null : JSON.stringify(row.address),
      row.shipping === null ? null : JSON.stringify(row.shipping),
      row.created_at,
    ],
  );
}

export async function selectCustomer(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
): Promise<CustomerRow | undefined> {
  const [row] = await db.query<CustomerRow>(selectOwnRowById('customers', columns, 'deleted_at IS NULL'), [
    id,
    merchantId,
    mode,
  ]);
  return row;
}

/** Writes every answered field; the service has merged the change into the current row. */
export async function updateCustomer(db: Queryable, row: CustomerRow, now: Date): Promise<CustomerRow | undefined> {
  const [updated] = await db.query<CustomerRow>(
    `UPDATE customers SET merchant_user_id = $4, email = $5, first_name = $6, last_name = $7, phone = $8,
       description = $9, address = $10, shipping = $11, updated_at = $12
     WHERE ${ownCustomer} AND deleted_at IS NULL RETURNING ${columns}`,
    [
      row.id,
      row.merchant_id,
      row.mode,
      row.merchant_user_id,
      row.email,
      row.first_name,
      row.last_name,
      row.phone,
      row.description,
      row.address === null ? null : JSON.stringify(row.address),
      row.shipping === null ? null : JSON.stringify(row.shipping),
      now,
    ],
  );
  return updated;
}

export async function markCustomerDeleted(
  db: Queryable,
  merchantId: string,
  mode: string,
  id: string,
  now: Date,
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE customers SET deleted_at = $4, updated_at = $4 WHERE ${ownCustomer} AND deleted_at IS NULL RETURNING id`,
    [id, merchantId, mode, now],
  );
  return rows.length > 0;
}

export interface CustomerFilters extends CreatedRange {
  email?: string;
  merchantUserId?: string;
}

export async function selectCustomerPage(
  db: Queryable,
  merchantId: string,
  mode: string,
  filters: CustomerFilters,
  page: PageRequest,
) {
  const filter = listFilter(merchantId, mode, 'deleted_at IS NULL')
    .add((p) => `lower(email) = lower(${p})`, filters.email)
    .add((p) => `merchant_user_id = ${p}`, filters.merchantUserId)
    .created(filters);
  return selectPage<CustomerRow>(db, { table: 'customers', columns, where: filter.where, params: filter.params }, page);
}

/** Who each of these customers of the merchant is (name and e-mail), for the dashboard's lists. */
export async function selectCustomerPeople(
  db: Queryable,
  merchantId: string,
  mode: string,
  ids: readonly string[],
): Promise<Array<{ id: string; first_name: string | null; last_name: string | null; email: string | null }>> {
  if (ids.length === 0) return [];
  return db.query(
    `SELECT id, first_name, last_name, email FROM customers WHERE id = ANY($3) AND merchant_id = $1 AND mode = $2`,
    [merchantId, mode, ids],
  );
}
