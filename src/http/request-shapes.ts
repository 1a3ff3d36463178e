/**
 * Request shapes that the provider's existing clients send (docs/api.md#requests, docs/api.md#compatibility-with-existing-clients), brought to the one
 * shape the route schemas validate, before validation. Driven by those schemas, so that a field
 * added later follows the same rules, and so that nothing unknown is let through: a field the
 * schema does not know is left for validation to refuse, naming it.
 *
 * - `""` for an optional field that is not free text (an id, an enum, a URL, a number, a flag,
 *   an object or a list, or text whose pattern or format refuses `""`, such as a phone, an
 *   e-mail or a country) means "not given"; free text keeps `""`. A text field opts in
 *   with `x-empty-is-absent` on its schema (ids and URLs).
 * - `null` or `""` items of an optional list are dropped (`images: [""]`,
 *   `paymentMethodTypes: [null, "card"]`); a list of nothing but those is not given.
 * - A number field takes a numeric string (`quantity: "2"`); in a form body, whose values are all
 *   text, a flag takes `true`/`false` and a list field a single value.
 * - An enum marked `x-any-case` is compared without regard to case (`confirmationMethod: "Manual"`).
 * - A query key in dot notation names the bracket one (`created.gte` for `created[gte]`).
 * - The path id repeated in the body or the query (route config `repeatedPathParam`) is checked
 *   and dropped; a body in another shape is reshaped by the route (`reshapeBody`).
 */

import type { FastifyRequest } from 'fastify';
import { invalidField } from '../core/errors.js';

/** The subset of JSON Schema the route schemas (TypeBox) are written in. */
interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  pattern?: string;
  format?: string;
  'x-empty-is-absent'?: boolean;
  'x-any-case'?: boolean;
}

const absent = Symbol('absent');

function branches(schema: Schema): Schema[] {
  const alternatives = schema.anyOf ?? schema.oneOf;
  return alternatives ? alternatives.flatMap(branches) : [schema];
}

function hasType(schema: Schema, type: string): boolean {
  return schema.type === type || (Array.isArray(schema.type) && schema.type.includes(type));
}

/** Whether some branch of the schema takes a value of this JSON type. */
function accepts(schema: Schema, type: 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object' | 'null') {
  return branches(schema).some((branch) => {
    if (branch.enum) return branch.enum.some((value) => jsonType(value) === type);
    if (branch.const !== undefined) return jsonType(branch.const) === type;
    return hasType(branch, type) || (type === 'integer' && hasType(branch, 'number'));
  });
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

/**
 * Whether a string branch's pattern or format refuses `""`: such a field is not free text, and
 * `""` can only mean "not given" (docs/api.md#compatibility-with-existing-clients: WooCommerce sends `billingDetails.phone: ""` for an
 * order without a phone). A name that must not be empty (minLength) is free text: `""` stays refused.
 */
function refusesEmpty(branch: Schema): boolean {
  if (branch.format !== undefined) return true;
  return branch.pattern !== undefined && !new RegExp(branch.pattern, 'u').test('');
}

/** Free text is a string branch without a closed list of values, whose rule takes `""`. */
function emptyIsAbsent(schema: Schema): boolean {
  if (schema['x-empty-is-absent']) return true;
  const parts = branches(schema);
  if (parts.some((branch) => branch['x-empty-is-absent'])) return true;
  return !parts.some(
    (branch) => hasType(branch, 'string') && !branch.enum && branch.const === undefined && !refusesEmpty(branch),
  );
}

function listSchema(schema: Schema): Schema | undefined {
  return branches(schema).find((branch) => hasType(branch, 'array') && branch.items)?.items;
}

function objectSchema(schema: Schema): Schema | undefined {
  return branches(schema).find((branch) => hasType(branch, 'object') && branch.properties);
}

const integerText = /^-?\d{1,15}$/;
const numberText = /^-?\d{1,15}(\.\d{1,15})?$/;

function normalizeText(schema: Schema, value: string, form: boolean): unknown {
  if (accepts(schema, 'string')) {
    const anyCase = branches(schema).find((branch) => branch['x-any-case'] && branch.enum);
    const canonical = anyCase?.enum?.find(
      (allowed) => typeof allowed === 'string' && allowed.toLowerCase() === value.toLowerCase(),
    );
    return canonical ?? value;
  }
  if (accepts(schema, 'integer') && integerText.test(value)) return Number(value);
  if (accepts(schema, 'number') && numberText.test(value)) return Number(value);
  if (form && accepts(schema, 'boolean') && (value === 'true' || value === 'false')) return value === 'true';
  if (form && accepts(schema, 'array')) return normalizeValue(schema, [value], form, false);
  return value;
}

function normalizeValue(schema: Schema, value: unknown, form: boolean, optional: boolean): unknown {
  if (value === '' && optional && emptyIsAbsent(schema)) return absent;
  if (typeof value === 'string') return normalizeText(schema, value, form);
  if (Array.isArray(value)) {
    const items = listSchema(schema);
    if (!items) return value;
    const unset = (item: unknown) =>
      (item === null && !accepts(items, 'null')) || (item === '' && emptyIsAbsent(items));
    const kept = value.filter((item) => !unset(item));
    if (optional && value.length > 0 && kept.length === 0) return absent;
    return kept.map((item) => normalizeValue(items, item, form, false));
  }
  if (value !== null && typeof value === 'object') {
    const object = objectSchema(schema);
    if (object) normalizeObject(object, value as Record<string, unknown>, form);
  }
  return value;
}

function normalizeObject(schema: Schema, value: Record<string, unknown>, form: boolean): void {
  const required = new Set(schema.required ?? []);
  for (const [key, child] of Object.entries(value)) {
    const property = schema.properties?.[key];
    if (!property || !Object.hasOwn(schema.properties!, key)) continue;
    const normalized = normalizeValue(property, child, form, !required.has(key));
    if (normalized === absent) delete value[key];
    else value[key] = normalized;
  }
}

/** A body as its route's schema expects it; `form`: it came as a form, so every value is text. */
export function normalizeBody(schema: unknown, body: unknown, form: boolean): unknown {
  if (!schema || body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const object = objectSchema(schema as Schema);
  if (object) normalizeObject(object, body as Record<string, unknown>, form);
  return body;
}

/** A query string as its route's schema expects it (values are text; validation coerces them). */
export function normalizeQuery(schema: unknown, query: Record<string, unknown>): Record<string, unknown> {
  const object = schema ? objectSchema(schema as Schema) : undefined;
  if (!object?.properties) return query;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(query)) {
    // `created.gte` (the Java SDK) is `created[gte]` (docs/api.md#lists, PHP's http_build_query).
    const bracketed = key.replace(/\.([^.[\]]+)/g, '[$1]');
    const name =
      !Object.hasOwn(object.properties, key) && Object.hasOwn(object.properties, bracketed) ? bracketed : key;
    if (name !== key && Object.hasOwn(query, name) && query[name] !== value) {
      result[key] = value;
      continue;
    }
    const property = object.properties[name];
    if (value === '' && property && !(object.required ?? []).includes(name) && emptyIsAbsent(property)) continue;
    result[name] = value;
  }
  return result;
}

/** An empty body in every form clients send it: nothing, `{}`, `[]` (PHP's empty array) or `""`. */
export function isEmptyBody(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    body === '' ||
    (Array.isArray(body) && body.length === 0) ||
    (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0)
  );
}

function isFormRequest(request: FastifyRequest): boolean {
  const type = request.headers['content-type'];
  return typeof type === 'string' && type.toLowerCase().startsWith('application/x-www-form-urlencoded');
}

/** Drops each field that repeats the path parameter, or refuses it when it names another object. */
function checkRepeatedPathParam(request: FastifyRequest): void {
  const repeated = request.routeOptions.config.repeatedPathParam;
  if (!repeated) return;
  const pathValue = (request.params as Record<string, string | undefined>)[repeated.param];
  const parts: Array<[unknown, readonly string[] | undefined]> = [
    [request.body, repeated.body],
    [request.query, repeated.query],
  ];
  for (const [values, fields] of parts) {
    if (values === null || typeof values !== 'object' || Array.isArray(values)) continue;
    const record = values as Record<string, unknown>;
    for (const field of fields ?? []) {
      if (!Object.hasOwn(record, field)) continue;
      const given = record[field];
      if (given !== '' && given !== pathValue) {
        throw invalidField(field, `${field} must be the same id as the one in the path, or be left out`, 'path');
      }
      delete record[field];
    }
  }
}

/** Every step above, in the API's preValidation, after nulls were dropped. */
export function shapeRequest(request: FastifyRequest): void {
  const schema = request.routeOptions.schema as { body?: unknown; querystring?: unknown } | undefined;
  const { reshapeBody } = request.routeOptions.config;
  const body = request.body;
  if (reshapeBody && body !== null && typeof body === 'object' && !Array.isArray(body)) {
    request.body = reshapeBody(body as Record<string, unknown>);
  }
  checkRepeatedPathParam(request);
  if (request.body !== undefined) request.body = normalizeBody(schema?.body, request.body, isFormRequest(request));
  if (request.query && typeof request.query === 'object') {
    request.query = normalizeQuery(schema?.querystring, request.query as Record<string, unknown>);
  }
}
