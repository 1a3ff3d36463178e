/**
 * Processor accounts (docs/processors.md): the operator connects a merchant to Adyen or Stripe,
 * in test mode (the processor's test environment in place of the sandbox) or live. Credentials
 * are sealed by the vault in the transaction that writes the account and never shown again.
 */
import type { Clock } from '../clock.js';
import type { Db } from '../db/db.js';
import { isUniqueViolation } from '../db/errors.js';
import { DomainError, invalidField, notFound } from '../core/errors.js';
import { newId } from '../ids.js';
import { isoTimestamp } from '../time.js';
import type { Vault } from '../vault/vault.js';
import { processorAccountContext } from '../vault/secrets-at-rest.js';
import {
  checkBaseUrl,
  checkCredentials,
  defaultBaseUrls,
  defaultDisputesBaseUrls,
  hintField,
  type Credentials,
} from './credentials.js';
import * as queries from './queries.js';
import {
  processorNames,
  type CreateProcessorAccountBody,
  type ProcessorAccount,
  type ProcessorName,
  type UpdateProcessorAccountBody,
} from './schemas.js';

export function createProcessorAccountService({
  db,
  clock,
  vault,
  production,
  publicUrl,
  merchantExists,
  onChange,
}: {
  db: Db;
  clock: Clock;
  vault: Vault;
  production: boolean;
  publicUrl: () => string;
  merchantExists: (merchantId: string) => Promise<boolean>;
  /** An account was created, enabled or disabled: what keys resolve to must be read again. */
  onChange: () => void;
}) {
  function toAccount(row: queries.ProcessorAccountRow): ProcessorAccount {
    return {
      id: row.id,
      merchantId: row.merchant_id,
      processor: row.processor,
      mode: row.mode,
      status: row.status,
      credentialsHint: row.credentials_hint,
      baseUrl: row.base_url ?? defaultBaseUrls[row.processor][row.mode] ?? '',
      disputesBaseUrl: row.disputes_base_url ?? defaultDisputesBaseUrls[row.processor][row.mode],
      webhookUrl: `${publicUrl()}/processor_webhooks/${row.id}`,
      lastNotificationAt: row.last_notification_at === null ? null : isoTimestamp(row.last_notification_at),
      created: isoTimestamp(row.created_at),
      updated: isoTimestamp(row.updated_at),
    };
  }

  function sealed(id: string, processor: ProcessorName, credentials: Credentials) {
    return {
      credentialsEncrypted: vault.encrypt(JSON.stringify(credentials), processorAccountContext(id)),
      credentialsHint: `…${credentials[hintField[processor]]!.slice(-4)}`,
    };
  }

  function baseUrlOf(processor: ProcessorName, mode: 'test' | 'live', given: string | undefined): string | null {
    if (given !== undefined) return checkBaseUrl(given, production, processor);
    if (defaultBaseUrls[processor][mode] === null) {
      throw invalidField(
        'baseUrl',
        "baseUrl is required for a live Adyen account: the account's own live prefix URL (https://{prefix}-checkout-live.adyenpayments.com/checkout/v71)",
        'required',
      );
    }
    return null;
  }

  /** Only Adyen has a Disputes API apart (docs/processors-adyen.md, Disputes). */
  function disputesBaseUrlOf(processor: ProcessorName, given: string | undefined): string | undefined {
    if (given === undefined) return undefined;
    if (processor !== 'adyen') {
      throw invalidField('disputesBaseUrl', 'disputesBaseUrl is for Adyen accounts only', 'processor');
    }
    return checkBaseUrl(given, production, processor, 'disputesBaseUrl');
  }

  async function refuseSecondEnabled(caught: unknown, merchantId: string, mode: string): Promise<never> {
    if (!isUniqueViolation(caught, 'processor_accounts_enabled')) throw caught;
    const existing = await queries.selectEnabledAccount(db, merchantId, mode as 'test' | 'live');
    throw new DomainError(
      'processor_account_exists',
      `The merchant already has an enabled ${mode} processor account${existing ? ` (${existing.id})` : ''}; disable it first`,
      existing ? { accountId: existing.id } : null,
    );
  }

  return {
    async create(merchantId: string, input: CreateProcessorAccountBody): Promise<ProcessorAccount> {
      const processor = input.processor as ProcessorName;
      if (!processorNames.includes(processor)) {
        throw invalidField('processor', `processor must be one of ${processorNames.join(', ')}`, 'enum');
      }
      if (input.mode !== 'test' && input.mode !== 'live') {
        throw invalidField('mode', 'mode must be test or live', 'enum');
      }
      const mode = input.mode;
      const credentials = checkCredentials(processor, mode, input.credentials);
      const baseUrl = baseUrlOf(processor, mode, input.baseUrl);
      if (!(await merchantExists(merchantId))) throw notFound('merchant', merchantId);
      const id = newId('pa');
      const now = clock.now();
      const { credentialsEncrypted, credentialsHint } = sealed(id, processor, credentials);
      const row: queries.ProcessorAccountRow = {
        id,
        merchant_id: merchantId,
        processor,
        mode,
        status: 'enabled',
        credentials_encrypted: credentialsEncrypted,
        credentials_hint: credentialsHint,
        base_url: baseUrl,
        disputes_base_url: disputesBaseUrlOf(processor, input.disputesBaseUrl) ?? null,
        last_notification_at: null,
        created_at: now,
        updated_at: now,
      };
      await queries.insertAccount(db, row).catch((err: unknown) => refuseSecondEnabled(err, merchantId, mode));
      onChange();
      return toAccount(row);
    },

    async list(merchantId: string): Promise<ProcessorAccount[]> {
      if (!(await merchantExists(merchantId))) throw notFound('merchant', merchantId);
      return (await queries.selectAccountsOfMerchant(db, merchantId)).map(toAccount);
    },

    async update(id: string, input: UpdateProcessorAccountBody): Promise<ProcessorAccount> {
      if (input.status !== undefined && input.status !== 'enabled' && input.status !== 'disabled') {
        throw invalidField('status', 'status must be enabled or disabled', 'enum');
      }
      const current = await queries.selectAccount(db, id);
      if (!current) throw notFound('processor account', id);
      const credentials =
        input.credentials === undefined ? null : checkCredentials(current.processor, current.mode, input.credentials);
      const baseUrl =
        input.baseUrl === undefined ? undefined : checkBaseUrl(input.baseUrl, production, current.processor);
      const disputesBaseUrl = disputesBaseUrlOf(current.processor, input.disputesBaseUrl);
      const updated = await queries
        .updateAccount(
          db,
          id,
          {
            ...(credentials === null ? {} : sealed(id, current.processor, credentials)),
            ...(baseUrl === undefined ? {} : { baseUrl }),
            ...(disputesBaseUrl === undefined ? {} : { disputesBaseUrl }),
            ...(input.status === undefined ? {} : { status: input.status }),
          },
          clock.now(),
        )
        .catch((err: unknown) => refuseSecondEnabled(err, current.merchant_id, current.mode));
      if (!updated) throw notFound('processor account', id);
      onChange();
      return toAccount(updated);
    },

    /** Whether the merchant may hold keys of `mode` with a processor behind them (live needs an enabled account). */
    async hasEnabledAccount(merchantId: string, mode: 'test' | 'live'): Promise<boolean> {
      return (await queries.selectEnabledAccount(db, merchantId, mode)) !== undefined;
    },
  };
}

export type ProcessorAccountService = ReturnType<typeof createProcessorAccountService>;
