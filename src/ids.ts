import { randomFillSync } from 'node:crypto';

export type IdPrefix =
  | 'cus'
  | 'pm'
  | 'pt'
  | 'evt'
  | 're'
  | 'in'
  | 'we'
  | 'mer'
  | 'key'
  | 'vk'
  | 'wd'
  | 'wa'
  | 'tm'
  // A go-live check (whc_) and the object its test deliveries refer to, which exists only for the check (chk_).
  | 'whc'
  | 'chk'
  // A logged API request (issue 11: the dashboard's request logs).
  | 'req'
  // A checkout session (issue 14, docs/checkout.md).
  | 'cs'
  // A processor account (docs/processors.md).
  | 'pa'
  // A balance transaction and a payout (issue 43, docs/balances.md).
  | 'txn'
  | 'po'
  // A dispute and an uploaded file (issue 44, docs/disputes.md).
  | 'dp'
  | 'file';

const TEN_POW_18 = 10n ** 18n;

/**
 * docs/api.md#base-url-and-authentication: the prefix and 19 digits. 63 random bits (about 9·10^18 values) make enumeration
 * useless and collisions across processes negligible; the primary key catches the rest.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${TEN_POW_18 + randomBelow9e18()}`;
}

/**
 * Random bytes drawn from the CSPRNG 4 KiB at a time rather than one call per id (Node's
 * randomUUID pools the same way). Each byte is handed out once.
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** The offset of `count` fresh random bytes in the pool. */
function take(count: number): number {
  if (poolOffset + count > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const offset = poolOffset;
  poolOffset += count;
  return offset;
}

/** A random number below 9·10^18: a random 64-bit word reduced modulo 9·10^18, as ids have always been drawn. */
export function randomBelow9e18(): bigint {
  return pool.readBigUInt64BE(take(8)) % (9n * TEN_POW_18);
}

/** `byteCount` random bytes as lower-case hex (request trace ids). */
export function randomHex(byteCount: number): string {
  const offset = take(byteCount);
  return pool.toString('hex', offset, offset + byteCount);
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_\\d{19}$`).test(value);
}
