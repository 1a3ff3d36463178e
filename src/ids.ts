import { randomFillSync } from 'node:crypto';

export type IdPrefix = 'cus' | 'pm' | 'pt' | 'evt' | 're' | 'in' | 'we' | 'mer' | 'key' | 'vk' | 'wd' | 'wa';

const TEN_POW_18 = 10n ** 18n;

/**
 * DESIGN §2: the prefix and 19 digits. 63 random bits (about 9·10^18 values) make enumeration
 * useless and collisions across processes negligible; the primary key catches the rest.
 */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${TEN_POW_18 + randomBelow9e18()}`;
}

/**
 * Random 64-bit words, drawn from the CSPRNG 512 at a time rather than one system call per id
 * (Node's randomUUID pools the same way). Each word is handed out once.
 */
const pool = Buffer.alloc(8 * 512);
let poolOffset = pool.length;

/** A random number below 9·10^18: a random 64-bit word reduced modulo 9·10^18, as ids have always been drawn. */
export function randomBelow9e18(): bigint {
  if (poolOffset >= pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const word = pool.readBigUInt64BE(poolOffset);
  poolOffset += 8;
  return word % (9n * TEN_POW_18);
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_\\d{19}$`).test(value);
}
