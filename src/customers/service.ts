import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import { isUniqueViolation } from '../db/errors.js';
import type { PageRequest } from '../db/pagination.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { createdBounds, normalizeAddress, normalizeShipping } from '../core/common-schemas.js';
import { DomainError, notFound } from '../core/errors.js';
import type { Page } from '../core/page.js';
import { newId } from '../ids.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import type { CreateCustomerBody, Customer, ListCustomersQuery, UpdateCustomerBody } from './schemas.js';

/** What deleting a customer asks of the payment methods domain. */
export interface CustomerDeletionHook {
  detachAllOfCustomer(tx: Queryable, merchant: MerchantContext, customerId: string, now: Date): Promise<void>;
}

export function toCustomer(row: queries.CustomerRow): Customer {
  return {
    id: row.id,
    address: row.address,
    description: row.description,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    phone: row.phone,
    shipping: row.shipping,
    merchantUserId: row.merchant_user_id,
    created: isoTimestamp(row.created_at),
  };
}

const merchantUserIdTaken = () =>
  new DomainError('invalid_request', 'merchantUserId is already used by another customer of this merchant', {
    param: 'merchantUserId',
    rule: 'unique',
  });

/** resource_missing for a customer id that names no live customer of the merchant. */
export function customerMissing(id: string, param = 'customerId'): DomainError {
  return new DomainError('resource_missing', `No such customer: '${/^cus_\d{19}$/.test(id) ? id : '…'}'`, { param });
}

export function createCustomerService({
  db,
  clock,
  onDelete,
}: {
  db: Db;
  clock: Clock;
  onDelete?: CustomerDeletionHook;
}) {
  async function load(db: Queryable, merchant: MerchantContext, id: string): Promise<queries.CustomerRow> {
    const row = await queries.selectCustomer(db, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('customer', id);
    return row;
  }

  return {
    async create(merchant: MerchantContext, input: CreateCustomerBody): Promise<Customer> {
      const row: queries.CustomerRow = {
        id: newId('cus'),
        merchant_id: merchant.merchantId,
        mode: merchant.mode,
        merchant_user_id: input.merchantUserId ?? null,
        email: input.email ?? null,
        first_name: input.firstName ?? null,
        last_name: input.lastName ?? null,
        phone: input.phone ?? null,
        description: input.description ?? null,
        address: normalizeAddress(input.address),
        shipping: normalizeShipping(input.shipping),
        created_at: clock.now(),
      };
      try {
        await queries.insertCustomer(db, row);
      } catch (err) {
        if (isUniqueViolation(err, 'customers_merchant_user')) throw merchantUserIdTaken();
        throw err;
      }
      return toCustomer(row);
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<Customer> {
      return toCustomer(await load(db, merchant, id));
    },

    /** Name and e-mail of each of these customers (deleted ones too: their payments stay), by id. */
    async peopleOf(
      merchant: MerchantContext,
      ids: readonly string[],
    ): Promise<Map<string, { name: string | null; email: string | null }>> {
      const rows = await queries.selectCustomerPeople(db, merchant.merchantId, merchant.mode, [...new Set(ids)]);
      return new Map(
        rows.map((row) => {
          const name = [row.first_name, row.last_name].filter(Boolean).join(' ');
          return [row.id, { name: name || null, email: row.email }];
        }),
      );
    },

    /** For other domains: the customer row, or resource_missing naming `param`. */
    async require(tx: Queryable, merchant: MerchantContext, id: string, param = 'customerId'): Promise<Customer> {
      const row = await queries.selectCustomer(tx, merchant.merchantId, merchant.mode, id);
      if (!row) throw customerMissing(id, param);
      return toCustomer(row);
    },

    async update(merchant: MerchantContext, id: string, changes: UpdateCustomerBody): Promise<Customer> {
      const current = await load(db, merchant, id);
      const merged: queries.CustomerRow = {
        ...current,
        merchant_user_id: changes.merchantUserId ?? current.merchant_user_id,
        email: changes.email ?? current.email,
        first_name: changes.firstName ?? current.first_name,
        last_name: changes.lastName ?? current.last_name,
        phone: changes.phone ?? current.phone,
        description: changes.description ?? current.description,
        address: changes.address
          ? normalizeAddress({ ...denull(current.address), ...changes.address })
          : current.address,
        shipping: changes.shipping ? normalizeShipping(changes.shipping) : current.shipping,
      };
      try {
        const updated = await queries.updateCustomer(db, merged, clock.now());
        if (!updated) throw notFound('customer', id);
        return toCustomer(updated);
      } catch (err) {
        if (isUniqueViolation(err, 'customers_merchant_user')) throw merchantUserIdTaken();
        throw err;
      }
    },

    /** The customer disappears and its payment methods are detached, in one transaction. */
    async delete(merchant: MerchantContext, id: string): Promise<{ id: string; deleted: true }> {
      const now = clock.now();
      await db.transaction(async (tx) => {
        if (!(await queries.markCustomerDeleted(tx, merchant.merchantId, merchant.mode, id, now)))
          throw notFound('customer', id);
        await onDelete?.detachAllOfCustomer(tx, merchant, id, now);
      });
      return { id, deleted: true };
    },

    async list(merchant: MerchantContext, query: ListCustomersQuery): Promise<Page<Customer>> {
      const page: PageRequest = query;
      const filters = { email: query.email, merchantUserId: query.merchantUserId, ...createdBounds(query) };
      const { rows, hasMore } = await queries.selectCustomerPage(db, merchant.merchantId, merchant.mode, filters, page);
      return { data: rows.map(toCustomer), hasMore };
    },
  };
}

function denull<T extends object>(value: T | null): Partial<{ [K in keyof T]: NonNullable<T[K]> }> {
  if (!value) return {};
  return Object.fromEntries(Object.entries(value).filter(([, child]) => child !== null)) as Partial<{
    [K in keyof T]: NonNullable<T[K]>;
  }>;
}

export type CustomerService = ReturnType<typeof createCustomerService>;
