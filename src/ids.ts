import { randomBytes } from 'node:crypto';

export type IdPrefix = 'cus' | 'pm' | 'pt' | 'evt' | 're' | 'in' | 'we' | 'mer' | 'key' | 'vk' | 'wd' | 'wa';

const TEN_POW_18 = 10n ** 18n;

/**
 * DESIGN §2: the prefix and 19 digits. 63 random bits (about 9·10^18 values) make enumeration
 * useless and collisions across processes negligible; the primary key catches the rest.
 */
export function newId(prefix: IdPrefix): string {
  const random = randomBytes(8).readBigUInt64BE() % (9n * TEN_POW_18);
  return `${prefix}_${TEN_POW_18 + random}`;
}

export function isId(prefix: IdPrefix, value: string): boolean {
  return new RegExp(`^${prefix}_\\d{19}$`).test(value);
}
