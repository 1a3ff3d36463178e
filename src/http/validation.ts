import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { DomainError } from '../core/errors.js';
import { madeOnce } from './lazy-compilers.js';
import { looksLikeCardNumber } from '../redact.js';
import { editDistance } from '../edit-distance.js';
import { cardNumberInFreeText } from './free-text-guard.js';

/**
 * Two validators: request bodies are checked strictly (a number is not a string, unknown fields
 * are refused), while path and query parameters, which arrive as text, are coerced.
 * `x-rule` on a schema is the sentence used when a value breaks it ("must be a string of digits").
 */
function createAjv(coerceTypes: boolean): Ajv {
  // verbose: errors carry their parentSchema, where `x-rule` is read (never `data`, which may hold card digits).
  const ajv = new Ajv({
    coerceTypes,
    useDefaults: true,
    removeAdditional: false,
    allErrors: false,
    strict: false,
    verbose: true,
  });
  addFormats.default(ajv, ['email', 'uri', 'date-time', 'ipv4', 'ipv6']);
  ajv.addKeyword({ keyword: 'x-rule', schemaType: 'string' });
  return ajv;
}

const bodyAjv = createAjv(false);
const parameterAjv = createAjv(true);

const validators = madeOnce<(data: unknown) => { value: unknown } | { error: Error }>();

/**
 * Compiled on the route's first request, and shared by every server of the process with the same
 * schema for the same part of the request (lazy-compilers.ts).
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const body = httpPart === 'body';
  return validators(`${httpPart} ${JSON.stringify(schema)}`, () => {
    let validate: ValidateFunction | undefined;
    return (data: unknown) => {
      validate ??= (body ? bodyAjv : parameterAjv).compile(schema as object);
      if (!validate(data)) return { error: toDomainError(validate, httpPart) };
      // A body's free text holds no card number (docs/decisions/0045-card-numbers-in-free-text.md).
      const cardNumber = body ? cardNumberInFreeText(schema, data) : undefined;
      return cardNumber ? { error: cardNumber } : { value: data };
    };
  });
};

function toDomainError(validate: ValidateFunction, httpPart: string | undefined): Error {
  const errors = validate.errors ?? [];
  // With anyOf (e.g. an amount that is a digit string or an integer) the anyOf error itself,
  // reported last, carries the rule; the branch errors before it would only confuse.
  const error = errors.find((candidate) => candidate.keyword === 'anyOf' || candidate.keyword === 'oneOf') ?? errors[0];
  if (!error) return new DomainError('invalid_request', 'The request is not valid');
  const unknown = error.keyword === 'required' ? unknownFieldBeside(error) : undefined;
  if (unknown !== undefined) return unknown;
  const { param, message, suggestion } = describe(error, httpPart);
  return new DomainError('invalid_request', message, {
    param,
    rule: error.keyword,
    ...(suggestion === undefined ? {} : { suggestion }),
  });
}

interface ObjectSchema {
  properties?: Record<string, unknown>;
  additionalProperties?: unknown;
}

/** Spelling aside: `customer_id`, `CustomerID` and `customerId` are one name to a reader. */
const folded = (name: string) => name.toLowerCase().replace(/[_\-\s]/g, '');

/**
 * The known field nearest to an unknown name, when near enough to be a typo (issue 21, docs/api.md#the-api-reference):
 * `ammount` → `amount`, `customer_id` → `customerId`, `emial` → `email` (two letters swapped count one
 * edit: optimal string alignment distance). At most a third of the letters may differ, or one.
 */
export function closestField(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const apart = editDistance(folded(name), folded(candidate));
    if (apart < bestDistance) [best, bestDistance] = [candidate, apart];
  }
  if (best === undefined) return undefined;
  return bestDistance <= Math.max(1, Math.floor(Math.max(name.length, best.length) / 3)) ? best : undefined;
}

/**
 * A missing required field is often a misspelt one (`ammount` for `amount`): Ajv reports the
 * missing field first, so the object's unknown fields are looked for here and the one nearest to
 * the missing field (fewest edits, the first sent on a tie) is named instead, with the field it
 * was meant to be.
 */
function unknownFieldBeside(error: ErrorObject): DomainError | undefined {
  const schema = error.parentSchema as ObjectSchema | undefined;
  const data: unknown = error.data;
  if (!schema?.properties || schema.additionalProperties !== false) return undefined;
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return undefined;
  const known = Object.keys(schema.properties);
  const unknown = Object.keys(data).filter((key) => !Object.hasOwn(schema.properties!, key));
  if (unknown.length === 0) return undefined;
  const missing = String((error.params as { missingProperty?: unknown }).missingProperty);
  const apart = (key: string) => editDistance(folded(key), folded(missing));
  const name = unknown.reduce((nearest, key) => (apart(key) < apart(nearest) ? key : nearest));
  const parent = pointerToParam(error.instancePath);
  const param = parent ? `${parent}.${name}` : name;
  if (looksLikeCardNumber(name)) {
    const at = parent || 'body';
    return new DomainError('invalid_request', `${at} has an unknown field whose name looks like a card number`, {
      param: at,
      rule: 'additionalProperties',
    });
  }
  const suggestion = closestField(name, known);
  const missingParam = parent ? `${parent}.${missing}` : missing;
  const hint = suggestion === undefined ? '' : `: did you mean ${suggestion}?`;
  return new DomainError('invalid_request', `${param} is not a recognized field${hint} (${missingParam} is required)`, {
    param,
    rule: 'additionalProperties',
    ...(suggestion === undefined ? {} : { suggestion }),
  });
}

function describe(
  error: ErrorObject,
  httpPart: string | undefined,
): { param: string; message: string; suggestion?: string } {
  let param = pointerToParam(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const join = (child: string) => (param ? `${param}.${child}` : child);
  const schemaRule = (error.parentSchema as { 'x-rule'?: string } | undefined)?.['x-rule'];
  let rule: string;
  switch (error.keyword) {
    case 'required':
      param = join(String(params.missingProperty));
      rule = 'is required';
      break;
    case 'additionalProperties':
      // A card number sent as a field name is named generically, never echoed (docs/security.md: card data
      // appears in no error message).
      if (looksLikeCardNumber(String(params.additionalProperty))) {
        param ||= httpPart === 'body' ? 'body' : (httpPart ?? 'request');
        return { param, message: `${param} has an unknown field whose name looks like a card number` };
      }
      {
        const name = String(params.additionalProperty);
        const known = Object.keys((error.parentSchema as ObjectSchema | undefined)?.properties ?? {});
        const suggestion = closestField(name, known);
        param = join(name);
        if (suggestion === undefined) return { param, message: `${param} is not a recognized field` };
        return { param, message: `${param} is not a recognized field: did you mean ${suggestion}?`, suggestion };
      }
    case 'type':
      rule = schemaRule ?? `must be ${article(String(params.type))}`;
      break;
    case 'minLength':
      rule = schemaRule ?? (params.limit === 1 ? 'must not be empty' : `must be at least ${params.limit} characters`);
      break;
    case 'maxLength':
      rule = `must be at most ${params.limit} characters`;
      break;
    case 'enum':
      rule = `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`;
      break;
    case 'const':
      rule = `must be ${String(params.allowedValue)}`;
      break;
    case 'format':
      rule = schemaRule ?? `must be a valid ${formatName(String(params.format))}`;
      break;
    case 'minimum':
    case 'maximum':
      rule = schemaRule ?? `must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${params.limit}`;
      break;
    case 'minItems':
      rule = `must have at least ${params.limit} items`;
      break;
    case 'maxItems':
      rule = `must have at most ${params.limit} items`;
      break;
    default:
      rule = schemaRule ?? 'is not in the expected format';
  }
  if (!param) param = httpPart === 'body' ? 'body' : (httpPart ?? 'request');
  if (param === 'body' && error.keyword === 'type') return { param, message: `The request body ${rule}` };
  return { param, message: `${param} ${rule}` };
}

/** `/card/cardNo` → `card.cardNo`; `/lineItems/0/name` → `lineItems[0].name`. */
function pointerToParam(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '');
}

function article(type: string): string {
  const name = type.split(',')[0] ?? type;
  return /^[aeiou]/.test(name) ? `an ${name}` : `a ${name}`;
}

function formatName(format: string): string {
  return { uri: 'URL', email: 'email address', 'date-time': 'ISO 8601 timestamp' }[format] ?? format;
}

/** Deeper than any request of the API nests (`lineItems[0].images[0]` is 3); more is an attack, not a request. */
export const maxNestingDepth = 16;

// A NUL character or an unpaired UTF-16 surrogate cannot be stored as PostgreSQL text or jsonb.
// eslint-disable-next-line no-control-regex -- finding the NUL character is the point.
const unstorableText = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first value (or key) of a parsed request part that no field could accept: text with a NUL
 * character or an unpaired surrogate, or nesting deeper than maxNestingDepth. Walked without
 * recursion, so that a hostile body cannot exhaust the stack. `param` names it as validation does.
 */
export function findUnacceptableValue(
  value: unknown,
  part: string,
): { param: string; message: string; rule: string } | null {
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value, path: '', depth: 0 }];
  while (stack.length > 0) {
    const { value: current, path, depth } = stack.pop()!;
    const param = path || part;
    if (typeof current === 'string') {
      if (unstorableText.test(current)) {
        return {
          param,
          message: `${param} must not contain a NUL character or an unpaired surrogate`,
          rule: 'text',
        };
      }
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= maxNestingDepth) {
      return { param: part, message: `The request ${part} is nested too deeply`, rule: 'depth' };
    }
    if (Array.isArray(current)) {
      current.forEach((child, index) => stack.push({ value: child, path: `${path}[${index}]`, depth: depth + 1 }));
      continue;
    }
    for (const [key, child] of Object.entries(current)) {
      if (unstorableText.test(key)) {
        return {
          param: part,
          message: `A field name must not contain a NUL character or an unpaired surrogate`,
          rule: 'text',
        };
      }
      stack.push({ value: child, path: path ? `${path}.${key}` : key, depth: depth + 1 });
    }
  }
  return null;
}

/** Existing clients send `null` for every optional field they leave unset: null means absent. */
export function dropNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(dropNulls);
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) if (child !== null) result[key] = dropNulls(child);
  return result;
}
