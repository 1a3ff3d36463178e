import type { TSchema } from 'typebox';
import { containsCardNumber } from '../card-numbers.js';
import { validatorCompiler } from '../http/validation.js';

type Check = (data: unknown) => { value?: unknown; error?: Error };
const compiled = new WeakMap<object, Check>();

/**
 * A form checked by the API's own request schema and validator, so the dashboard accepts exactly
 * what the API accepts and refuses it with the same message naming the field (no second rule).
 */
export function validated<T>(schema: TSchema, data: unknown, part: 'body' | 'querystring' = 'body'): T {
  let check = compiled.get(schema);
  if (!check) {
    check = validatorCompiler({ schema, httpPart: part, method: 'POST', url: '/dashboard' }) as Check;
    compiled.set(schema, check);
  }
  const result = check(data);
  if (result.error) throw result.error;
  return data as T;
}

/**
 * A refused form's values as shown again: a value holding a card number is emptied, so that the
 * refusal never shows the number back (docs/decisions/0045-card-numbers-in-free-text.md).
 */
export function shownAgain(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).map(([name, value]) => [name, containsCardNumber(value) ? '' : value]),
  );
}

/** Drops empty form fields: an empty input means "not given", as a missing JSON field does. */
export function given(values: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}
