import { cardNumberInFreeTextMessage, containsCardNumber } from '../card-numbers.js';
import { DomainError } from '../core/errors.js';

/**
 * The card-number guard on request bodies (docs/decisions/0045-card-numbers-in-free-text.md): every
 * text value of a body that passed its schema is free text unless its schema says
 * `notFreeText` (src/core/common-schemas.ts: the card number itself, and identifiers the merchant owns: `orderNo`,
 * `merchantUserId`). A field added later is guarded without anyone remembering to; only an
 * exemption has to be written down.
 */
interface SchemaNode {
  'x-free-text'?: boolean;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
  anyOf?: SchemaNode[];
  oneOf?: SchemaNode[];
}

function exempt(schema: SchemaNode | undefined): boolean {
  if (schema === undefined) return false;
  if (schema['x-free-text'] === false) return true;
  const branches = schema.anyOf ?? schema.oneOf;
  return branches !== undefined && branches.some((branch) => branch['x-free-text'] === false);
}

/** The schema of one value of an object or array under `schema`, when the schema says it. */
function childSchema(schema: SchemaNode | undefined, key: string | number): SchemaNode | undefined {
  if (!schema) return undefined;
  if (typeof key === 'number') return schema.items;
  const declared = schema.properties?.[key];
  if (declared) return declared;
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

/**
 * Where in `value` a free-text value (or key) holds a card number: the path's parts, innermost
 * first, or null. Recursive, since a body that passed its schema is as shallow as the schema; the
 * path is put together only for a refusal, as this runs on every request body.
 */
function findIn(schema: SchemaNode | undefined, value: unknown): Array<string | number> | null {
  if (exempt(schema)) return null;
  if (typeof value === 'string') return containsCardNumber(value) ? [] : null;
  // A number where text is taken (a refund's description) is kept as its digits.
  if (typeof value === 'number') return Number.isInteger(value) && containsCardNumber(String(value)) ? [] : null;
  if (value === null || typeof value !== 'object') return null;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const found = findIn(childSchema(schema, index), value[index]);
      if (found) return [...found, index];
    }
    return null;
  }
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    // A key of `metadata` is the merchant's text too; named by its object, since the key is the number.
    if (containsCardNumber(key)) return [];
    const found = findIn(childSchema(schema, key), (value as Record<string, unknown>)[key]);
    if (found) return [...found, key];
  }
  return null;
}

/** The first free-text value (or key) of a body that passed its schema holding a card number, as a refusal naming it. */
export function cardNumberInFreeText(schema: unknown, data: unknown): DomainError | undefined {
  const found = findIn(schema as SchemaNode, data);
  if (!found) return undefined;
  const param = found
    .reverse()
    .reduce<string>(
      (path, part) => (typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${part}` : part),
      '',
    );
  return refusal(param || 'body');
}

function refusal(param: string): DomainError {
  return new DomainError('invalid_request', cardNumberInFreeTextMessage(param), { param, rule: 'card_number' });
}
