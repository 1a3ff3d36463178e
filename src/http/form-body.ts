/**
 * `application/x-www-form-urlencoded` bodies as existing clients send them (docs/api.md#compatibility-with-existing-clients): the
 * provider's Java SDK posts capture, cancel and attach as forms, and merchant servers forward
 * forms. Nested fields are written in bracket notation (`billingDetails[address][city]=…`,
 * `lineItems[0][name]=…`, PHP's http_build_query) or in dot notation (`created.gte=…`,
 * `lineItems[0].name=…`, the Java SDK's FormEncoder); both give the nested object that the
 * JSON body would have been, so the same schema validates it.
 */

import { invalidField } from '../core/errors.js';
import { maxNestingDepth } from './validation.js';

/** Far above any list of the API (lineItems ≤ 100): a larger index is an attack, not a request. */
const maxListIndex = 999;

type Node = Record<string, unknown> | unknown[];

/** `a[b][0].c` → ['a', 'b', '0', 'c']; `a[]` → ['a', ''] (append). Null for a malformed key. */
export function formKeyPath(key: string): string[] | null {
  const head = /^[^[\].]+/.exec(key);
  if (!head) return null;
  const path = [head[0]];
  let rest = key.slice(head[0].length);
  while (rest.length > 0) {
    const segment = /^\[([^[\]]*)\]|^\.([^[\].]+)/.exec(rest);
    if (!segment) return null;
    path.push(segment[1] ?? segment[2] ?? '');
    rest = rest.slice(segment[0].length);
  }
  return path;
}

/** The dotted form used in error messages (validation's `param`): `lineItems[0].name`. */
function paramOf(path: readonly string[]): string {
  return path.reduce((text, part, index) => {
    if (index === 0) return part;
    return /^\d*$/.test(part) ? `${text}[${part}]` : `${text}.${part}`;
  }, '');
}

const isListIndex = (segment: string) => segment === '' || /^\d{1,4}$/.test(segment);

/**
 * Parses a form body into the object a JSON body would be. Values stay text (schemas take text
 * where forms are sent); a key repeated without brackets becomes a list, as PHP's `a[]` would.
 * A key used both as a value and as a parent (`a=1&a[b]=2`) is refused, naming it.
 */
export function parseFormBody(text: string): Record<string, unknown> {
  refuseJsonText(text);
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    const path = formKeyPath(key);
    if (!path)
      throw invalidField('body', `The form field name '${key.slice(0, 64)}' is not in bracket or dot notation`);
    if (path.length > maxNestingDepth) throw invalidField('body', 'The request body is nested too deeply', 'depth');
    setPath(root, path, value);
  }
  return compactLists(root) as Record<string, unknown>;
}

/**
 * Issue 21, docs/api.md#the-api-reference: `curl -d '{"amount":"1999"}'` without `-H 'Content-Type: application/json'`
 * sends JSON labelled as a form, which would otherwise be read as one field named by the whole
 * text. A form's first field name never starts with `{` or `[` (no field of the API does, and
 * formKeyPath refuses a leading bracket), so the forms existing clients send (the Java SDK's
 * `paymentId=…&cancellationReason=…`) are untouched.
 */
function refuseJsonText(text: string): void {
  if (!/^\s*[[{]/.test(text)) return;
  throw invalidField(
    'body',
    'The request body looks like JSON but its Content-Type is application/x-www-form-urlencoded (what curl -d sends ' +
      "by default): send it with the header Content-Type: application/json (curl -H 'Content-Type: application/json')",
    'content_type',
  );
}

function setPath(root: Record<string, unknown>, path: string[], value: string): void {
  let node: Node = root;
  for (let index = 0; index < path.length; index++) {
    const segment = path[index]!;
    const last = index === path.length - 1;
    const param = paramOf(path.slice(0, index + 1));
    if (segment === '__proto__' || segment === 'constructor' || segment === 'prototype') {
      throw invalidField(param, `${param} is not a recognized field`, 'additionalProperties');
    }
    if (Array.isArray(node)) {
      if (!isListIndex(segment) || Number(segment) > maxListIndex) {
        throw invalidField(paramOf(path.slice(0, index)), `${paramOf(path.slice(0, index))} has an invalid list index`);
      }
    }
    const container = node as Record<string, unknown>;
    const slot = Array.isArray(node) && segment === '' ? String(node.length) : segment;
    const current = container[slot];
    if (last) {
      if (current === undefined) container[slot] = value;
      else if (typeof current === 'string') container[slot] = [current, value];
      else if (Array.isArray(current) && current.every((item) => typeof item === 'string')) current.push(value);
      else throw invalidField(param, `${param} is given both as a value and as a group of fields`);
      return;
    }
    const childIsList = isListIndex(path[index + 1]!);
    if (current === undefined) {
      const child: Node = childIsList ? [] : {};
      container[slot] = child;
      node = child;
    } else if (typeof current === 'object' && current !== null && Array.isArray(current) === childIsList) {
      node = current as Node;
    } else {
      throw invalidField(param, `${param} is given both as a value and as a group of fields`);
    }
  }
}

/** Lists written with gaps (`a[0]`, `a[2]`) keep their order without holes, as PHP and qs do. */
function compactLists(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => item !== undefined).map(compactLists);
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) result[key] = compactLists(child);
  return result;
}
