/**
 * Every column that holds a vault ciphertext, with the context its ciphertexts are bound to
 * (Vault.encrypt). Key rotation re-encrypts exactly these, so a new kind of secret at rest is
 * added here, and its writer takes its context from here, or the rotation leaves it behind.
 */

export interface SecretTable {
  readonly table: string;
  /** The columns that name one row (its primary key). */
  readonly keyColumns: readonly string[];
  readonly secretColumns: readonly string[];
  /** The context each of the row's ciphertexts was sealed in. */
  context(row: Record<string, string>): string;
}

/** A merchant's legacy (v1 notification) signing key, one per merchant. */
export const legacyKeyContext = (merchantId: string) => `legacy:${merchantId}`;
/** A team member's TOTP secret, confirmed or pending. */
export const teamMemberContext = (memberId: string) => `team_member:${memberId}`;
/** A stored Idempotency-Key answer (docs/api.md#idempotency), bound to its merchant, mode and key. */
export const idempotencyContext = (merchantId: string, mode: string, key: string) =>
  `idempotency:${merchantId}:${mode}:${key}`;

/**
 * The sealer of stored Idempotency-Key answers (src/http/idempotency.ts): the vault's cipher with
 * each answer bound to its merchant, mode and key.
 */
export function idempotencySealer(cipher: {
  encrypt(plaintext: string, context: string): string;
  decrypt(ciphertext: string, context: string): Promise<string>;
}) {
  type Owner = { merchantId: string; mode: string; key: string };
  return {
    seal: (plaintext: string, owner: Owner) =>
      cipher.encrypt(plaintext, idempotencyContext(owner.merchantId, owner.mode, owner.key)),
    open: (ciphertext: string, owner: Owner) =>
      cipher.decrypt(ciphertext, idempotencyContext(owner.merchantId, owner.mode, owner.key)),
  };
}

/** The development sandbox merchant's keys (`tessera start` outside production). */
export const sandboxKeysContext = (merchantId: string) => `sandbox:${merchantId}`;

/** A processor account's credentials (docs/processors.md), as one JSON object. */
export const processorAccountContext = (accountId: string) => `processor_account:${accountId}`;
/** A merchant's bank account number and IBAN (docs/balances.md). */
export const bankAccountContext = (merchantId: string) => `bank_account:${merchantId}`;

const byId = (row: Record<string, string>) => row.id ?? '';

export const secretTables: readonly SecretTable[] = [
  {
    table: 'payment_methods',
    keyColumns: ['id'],
    secretColumns: ['card_number_encrypted', 'security_code_encrypted', 'network_token_encrypted'],
    context: byId,
  },
  // The network token a storing payment obtained, kept until its card is bound.
  { table: 'payments', keyColumns: ['id'], secretColumns: ['network_token_encrypted'], context: byId },
  { table: 'webhook_endpoints', keyColumns: ['id'], secretColumns: ['token_encrypted'], context: byId },
  {
    table: 'merchants',
    keyColumns: ['id'],
    secretColumns: ['legacy_signing_key_encrypted'],
    context: (row) => legacyKeyContext(row.id ?? ''),
  },
  {
    table: 'team_members',
    keyColumns: ['id'],
    secretColumns: ['totp_secret_encrypted', 'totp_pending_encrypted'],
    context: (row) => teamMemberContext(row.id ?? ''),
  },
  {
    table: 'idempotency_keys',
    keyColumns: ['merchant_id', 'mode', 'key'],
    secretColumns: ['response_body'],
    context: (row) => idempotencyContext(row.merchant_id ?? '', row.mode ?? '', row.key ?? ''),
  },
  {
    table: 'sandbox_merchant',
    keyColumns: ['merchant_id'],
    secretColumns: ['keys_encrypted'],
    context: (row) => sandboxKeysContext(row.merchant_id ?? ''),
  },
  {
    table: 'processor_accounts',
    keyColumns: ['id'],
    secretColumns: ['credentials_encrypted'],
    context: (row) => processorAccountContext(row.id ?? ''),
  },
  {
    table: 'bank_accounts',
    keyColumns: ['merchant_id', 'currency'],
    secretColumns: ['account_number_encrypted', 'iban_encrypted'],
    context: (row) => bankAccountContext(row.merchant_id ?? ''),
  },
];
