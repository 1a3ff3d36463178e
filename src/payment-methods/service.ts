import type { Clock } from '../clock.js';
import type { Db, Queryable } from '../db/db.js';
import type { PageRequest } from '../db/pagination.js';
import { customerMissing, type CustomerService } from '../customers/service.js';
import type { MerchantContext } from '../core/merchant-context.js';
import { normalizeAddress, type AddressOut } from '../core/common-schemas.js';
import type { Page } from '../core/page.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { isId, newId } from '../ids.js';
import { isoTimestamp } from '../time.js';
import type { Vault } from '../vault/vault.js';
import { checkCard, checkExpiry } from './card.js';
import * as queries from './queries.js';
import type {
  BillingDetails,
  BillingDetailsOut,
  CreatePaymentMethodBody,
  ListPaymentMethodsQuery,
  PaymentMethod,
  UpdatePaymentMethodBody,
} from './schemas.js';

/*
 * The life of a payment method (docs/api.md#tokenization-rules), each step a conditional update in queries.ts:
 *   created (no customer) ─attach─▶ attached ─storing payment─▶ stored (network token, transaction reference)
 *   created ─storing payment─▶ stored
 *   attached | stored ─detach, or deletion of the customer─▶ detached (final: never used or attached again)
 */

/** What a payment needs of its payment method: the card in clear, only in memory, only for the processor. */
export interface PaymentMethodForPayment {
  id: string;
  customerId: string | null;
  storedAt: Date | null;
  detachedAt: Date | null;
  networkTransactionId: string | null;
  card: {
    number: string;
    brand: string;
    last4: string;
    expMonth: string;
    expYear: string;
    country: string;
    fingerprint: string;
    securityCode: string | null;
  };
}

export function toPaymentMethod(row: queries.PaymentMethodRow): PaymentMethod {
  return {
    id: row.id,
    type: 'card',
    billingDetails: row.billing_details ?? normalizeBillingDetails(undefined),
    created: isoTimestamp(row.created_at),
    customerId: row.customer_id,
    card: {
      brand: row.card_brand,
      country: row.card_country,
      expMonth: row.card_exp_month,
      expYear: row.card_exp_year,
      fingerprint: row.card_fingerprint,
      last4: row.card_last4,
      tokenType: row.token_type,
    },
    merchantPaySite: row.merchant_pay_site,
    boleto: null,
    pix: null,
    creditCardBrazil: null,
  };
}

export function normalizeBillingDetails(details: BillingDetails | undefined): BillingDetailsOut {
  return {
    address: normalizeAddress(details?.address),
    email: details?.email ?? null,
    firstName: details?.firstName ?? null,
    lastName: details?.lastName ?? null,
    phone: details?.phone ?? null,
    description: details?.description ?? null,
  };
}

/** An update replaces the fields it names; a partial address is merged into the current one. */
function mergeBillingDetails(current: BillingDetailsOut | null, changes: BillingDetails): BillingDetailsOut {
  const base = current ?? normalizeBillingDetails(undefined);
  return {
    address: changes.address ? normalizeAddress({ ...denull(base.address), ...changes.address }) : base.address,
    email: changes.email ?? base.email,
    firstName: changes.firstName ?? base.firstName,
    lastName: changes.lastName ?? base.lastName,
    phone: changes.phone ?? base.phone,
    description: changes.description ?? base.description,
  };
}

function denull(address: AddressOut | null): Partial<Record<keyof AddressOut, string>> {
  if (!address) return {};
  return Object.fromEntries(Object.entries(address).filter(([, value]) => value !== null)) as Partial<
    Record<keyof AddressOut, string>
  >;
}

const detachedState = (id: string) =>
  new DomainError(
    'invalid_state',
    `The payment method ${isId('pm', id) ? `'${id}' ` : ''}is detached and can no longer be used, attached or updated`,
    { param: 'id', state: 'detached' },
  );

export function createPaymentMethodService({
  db,
  clock,
  vault,
  customers,
}: {
  db: Db;
  clock: Clock;
  vault: Vault;
  customers: CustomerService;
}) {
  async function load(db: Queryable, merchant: MerchantContext, id: string): Promise<queries.PaymentMethodRow> {
    const row = await queries.selectPaymentMethod(db, merchant.merchantId, merchant.mode, id);
    if (!row) throw notFound('payment method', id);
    return row;
  }

  /**
   * Why an attach found nothing to change. Called before the conditional update, and again after
   * it matched no row, since a concurrent attach, detach or storing payment may have won.
   */
  function refuseAttach(row: queries.PaymentMethodRow, customerId: string): void {
    if (row.detached_at) throw detachedState(row.id);
    if (row.customer_id !== null && row.customer_id !== customerId) {
      throw new DomainError(
        'payment_method_bound_elsewhere',
        'The payment method is already attached to another customer; create a new payment method for this customer',
        { param: 'id' },
      );
    }
  }

  return {
    async create(merchant: MerchantContext, input: CreatePaymentMethodBody): Promise<PaymentMethod> {
      const now = clock.now();
      const checked = checkCard(input.card, now);
      if (!checked.ok) throw invalidField(checked.param, checked.message);
      const { card } = checked;
      const id = newId('pm');
      const row: queries.PaymentMethodRow = {
        id,
        merchant_id: merchant.merchantId,
        mode: merchant.mode,
        type: input.type,
        customer_id: null,
        billing_details: normalizeBillingDetails(input.billingDetails),
        merchant_pay_site: input.merchantPaySite ?? null,
        card_brand: card.brand,
        card_country: card.country,
        card_exp_month: card.expMonth,
        card_exp_year: card.expYear,
        card_last4: card.last4,
        card_fingerprint: vault.fingerprint(merchant.merchantId, card.number),
        token_type: null,
        network_transaction_id: null,
        stored_at: null,
        detached_at: null,
        created_at: now,
      };
      // The vault binds each ciphertext to its payment method id, so a ciphertext copied onto
      // another row does not decrypt.
      await queries.insertPaymentMethod(db, {
        ...row,
        card_number_encrypted: vault.encrypt(card.number, id),
        security_code_encrypted: card.securityCode === null ? null : vault.encrypt(card.securityCode, id),
      });
      return toPaymentMethod(row);
    },

    async retrieve(merchant: MerchantContext, id: string): Promise<PaymentMethod> {
      return toPaymentMethod(await load(db, merchant, id));
    },

    /** The billing name and e-mail of each of these payment methods, by id (never card data). */
    async billingPeopleOf(
      merchant: MerchantContext,
      ids: readonly string[],
    ): Promise<Map<string, { name: string | null; email: string | null }>> {
      const rows = await queries.selectBillingPeople(db, merchant.merchantId, merchant.mode, [...new Set(ids)]);
      return new Map(rows.map((row) => [row.id, { name: row.name, email: row.email }]));
    },

    /** The customer's attached (not detached) methods; 404 when the customer does not exist. */
    async listOfCustomer(
      merchant: MerchantContext,
      customerId: string,
      query: ListPaymentMethodsQuery,
    ): Promise<Page<PaymentMethod>> {
      const customer = await customers.require(db, merchant, customerId);
      const page: PageRequest = query;
      const { rows, hasMore } = await queries.selectCustomerPaymentMethodPage(
        db,
        merchant.merchantId,
        merchant.mode,
        customer.id,
        page,
      );
      return { data: rows.map(toPaymentMethod), hasMore };
    },

    /**
     * Attaches the method to a customer so that it is listed with the customer. Attaching does not
     * store a credential: CIT and MIT still need a successful storing payment (docs/api.md#tokenization-rules).
     * Attaching to the customer it is already attached to changes nothing.
     */
    async attach(merchant: MerchantContext, id: string, customerId: string): Promise<PaymentMethod> {
      const current = await load(db, merchant, id);
      await customers.require(db, merchant, customerId);
      refuseAttach(current, customerId);
      if (current.customer_id === customerId) return toPaymentMethod(current);
      const attached = await queries.attachPaymentMethod(
        db,
        merchant.merchantId,
        merchant.mode,
        id,
        customerId,
        clock.now(),
      );
      if (attached) return toPaymentMethod(attached);
      const latest = await load(db, merchant, id);
      refuseAttach(latest, customerId);
      if (latest.customer_id === customerId) return toPaymentMethod(latest);
      // Still unattached, so the customer was deleted meanwhile: this answers it as missing.
      await customers.require(db, merchant, customerId);
      throw new DomainError('invalid_state', 'The payment method changed while it was being attached; retry', {
        param: 'id',
      });
    },

    /**
     * Stripe semantics: detaching ends the method's life. It loses its customer and its stored
     * credential (network token and transaction reference) and can never be used for a payment
     * or attached again; the card needs a new payment method. Only an attached method can be
     * detached.
     */
    async detach(merchant: MerchantContext, id: string): Promise<PaymentMethod> {
      const current = await load(db, merchant, id);
      const refuse = (row: queries.PaymentMethodRow) => {
        if (row.detached_at) throw detachedState(row.id);
        if (row.customer_id === null) {
          throw new DomainError(
            'invalid_state',
            'The payment method is not attached to a customer, so it cannot be detached',
            {
              param: 'id',
              state: 'unattached',
            },
          );
        }
      };
      refuse(current);
      const detached = await queries.detachPaymentMethod(db, merchant.merchantId, merchant.mode, id, clock.now());
      if (detached) return toPaymentMethod(detached);
      refuse(await load(db, merchant, id));
      throw new DomainError('invalid_state', 'The payment method changed while it was being detached; retry', {
        param: 'id',
      });
    },

    async update(merchant: MerchantContext, id: string, changes: UpdatePaymentMethodBody): Promise<PaymentMethod> {
      const current = await load(db, merchant, id);
      if (current.detached_at) throw detachedState(id);
      let expMonth = current.card_exp_month;
      let expYear = current.card_exp_year;
      if (changes.card?.expMonth !== undefined || changes.card?.expYear !== undefined) {
        const checked = checkExpiry(
          changes.card.expMonth ?? current.card_exp_month,
          changes.card.expYear ?? current.card_exp_year,
          clock.now(),
        );
        if (!checked.ok) throw invalidField(checked.param, checked.message);
        expMonth = checked.expMonth;
        expYear = checked.expYear;
      }
      const merged: queries.PaymentMethodRow = {
        ...current,
        billing_details: changes.billingDetails
          ? mergeBillingDetails(current.billing_details, changes.billingDetails)
          : current.billing_details,
        merchant_pay_site: changes.merchantPaySite ?? current.merchant_pay_site,
        card_exp_month: expMonth,
        card_exp_year: expYear,
      };
      const updated = await queries.updatePaymentMethodDetails(db, merged, clock.now());
      // Zero rows: a concurrent detach won; the method is no longer updatable.
      if (!updated) throw detachedState(id);
      return toPaymentMethod(updated);
    },

    /** CustomerDeletionHook: runs in the transaction that deletes the customer. */
    async detachAllOfCustomer(tx: Queryable, merchant: MerchantContext, customerId: string, now: Date): Promise<void> {
      await queries.detachPaymentMethodsOfCustomer(tx, merchant.merchantId, merchant.mode, customerId, now);
    },

    /** docs/api.md#invoices: the card an invoice is charged with when it names none (null: the customer has none). */
    async latestStoredOfCustomer(merchant: MerchantContext, customerId: string): Promise<string | null> {
      return (await queries.selectLatestStoredOfCustomer(db, merchant.merchantId, merchant.mode, customerId)) ?? null;
    },

    /** For a payment without a method yet: its customer must exist all the same. */
    async requireCustomer(tx: Queryable, merchant: MerchantContext, customerId: string): Promise<void> {
      await customers.require(tx, merchant, customerId);
    },

    /**
     * The merchant's method with its card decrypted, for the processor only. Missing and another
     * merchant's are answered alike (docs/api.md#requests), naming the payment's `paymentMethod` field.
     * With `customerId`, the payment's customer is checked in the same statement (resource_missing
     * naming customerId first).
     */
    async loadForPayment(
      tx: Queryable,
      merchant: MerchantContext,
      id: string,
      customerId: string | null = null,
    ): Promise<PaymentMethodForPayment> {
      const { method: row, customerExists } = await queries.selectPaymentMethodSecretsWithCustomer(
        tx,
        merchant.merchantId,
        merchant.mode,
        id,
        customerId,
      );
      if (customerId !== null && !customerExists) throw customerMissing(customerId);
      if (!row) {
        throw new DomainError(
          'resource_missing',
          isId('pm', id) ? `No such payment method: '${id}'` : 'No such payment method',
          { param: 'paymentMethod' },
        );
      }
      const [number, securityCode] = await Promise.all([
        vault.decrypt(row.card_number_encrypted, row.id, tx),
        row.security_code_encrypted === null ? null : vault.decrypt(row.security_code_encrypted, row.id, tx),
      ]);
      return {
        id: row.id,
        customerId: row.customer_id,
        storedAt: row.stored_at,
        detachedAt: row.detached_at,
        networkTransactionId: row.network_transaction_id,
        card: {
          number,
          brand: row.card_brand,
          last4: row.card_last4,
          expMonth: row.card_exp_month,
          expYear: row.card_exp_year,
          country: row.card_country,
          fingerprint: row.card_fingerprint,
          securityCode,
        },
      };
    },

    /**
     * After a successful storing payment: binds the method to the customer with the stored
     * credential. The update is conditional (see queries.bindStoredCredential): false means that
     * another customer's storing payment bound the method first, or that it was detached.
     */
    async bindStoredCredential(
      tx: Queryable,
      merchant: MerchantContext,
      input: {
        paymentMethodId: string;
        customerId: string;
        networkTransactionId: string;
        networkToken: string | null;
        now: Date;
      },
    ): Promise<boolean> {
      return queries.bindStoredCredential(tx, merchant.merchantId, merchant.mode, {
        id: input.paymentMethodId,
        customerId: input.customerId,
        networkTransactionId: input.networkTransactionId,
        networkTokenEncrypted:
          input.networkToken === null ? null : vault.encrypt(input.networkToken, input.paymentMethodId),
        now: input.now,
      });
    },

    /** docs/api.md#tokenization-rules: the security code serves the first authorization only, then it is erased. */
    async eraseSecurityCode(tx: Queryable, paymentMethodId: string): Promise<void> {
      await queries.clearSecurityCode(tx, paymentMethodId, clock.now());
    },
  };
}

export type PaymentMethodService = ReturnType<typeof createPaymentMethodService>;
