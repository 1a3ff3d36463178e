/**
 * What Stripe accepts, as the Stripe stand-in checks it (test/helpers/stripe-stand-in.ts): Stripe's
 * form encoding, the parameters of each call the connector makes, and Stripe's error shape for a
 * request it refuses (400 `parameter_unknown` for a parameter it does not know).
 */

export type Params = { [key: string]: string | Params | Params[] | string[] };

/** A refusal in Stripe's error shape, with the HTTP status Stripe gives it. */
export class StripeRefusal {
  constructor(
    readonly status: number,
    readonly error: Record<string, unknown>,
  ) {}
}

export function invalid(
  code: string,
  message: string,
  param?: string,
  extra: Record<string, unknown> = {},
): StripeRefusal {
  return new StripeRefusal(400, {
    type: 'invalid_request_error',
    code,
    message,
    ...(param ? { param } : {}),
    ...extra,
  });
}

/**
 * What Stripe accepts for each call the connector makes: `true` for a value, a nested shape for
 * a hash, `'*'` for a hash of any keys (metadata), `[]` for a list.
 */
type Shape = { [key: string]: true | '*' | [] | Shape };
export const createShape: Shape = {
  amount: true,
  currency: true,
  confirm: true,
  capture_method: true,
  setup_future_usage: true,
  off_session: true,
  return_url: true,
  description: true,
  statement_descriptor_suffix: true,
  customer: true,
  expand: [],
  metadata: '*',
  payment_method_data: {
    type: true,
    card: { number: true, exp_month: true, exp_year: true, cvc: true },
    billing_details: { name: true, email: true },
  },
  payment_method_options: { card: { mit_exemption: { network_transaction_id: true }, request_three_d_secure: true } },
};
export const retrieveShape: Shape = { expand: [], client_secret: true };
export const captureShape: Shape = { amount_to_capture: true, expand: [], metadata: '*' };
export const cancelShape: Shape = { cancellation_reason: true, expand: [] };
export const refundShape: Shape = {
  payment_intent: true,
  charge: true,
  amount: true,
  reason: true,
  metadata: '*',
  expand: [],
};

export function checkShape(params: Params, shape: Shape, prefix = ''): void {
  for (const [key, value] of Object.entries(params)) {
    const name = prefix === '' ? key : `${prefix}[${key}]`;
    const allowed = shape[key];
    if (allowed === undefined) throw invalid('parameter_unknown', `Received unknown parameter: ${name}`, name);
    if (allowed === '*') {
      if (typeof value !== 'object' || Array.isArray(value))
        throw invalid('parameter_invalid_string', `Invalid hash`, name);
      for (const [metaKey, metaValue] of Object.entries(value)) {
        if (typeof metaValue !== 'string' || metaKey.length > 40 || metaValue.length > 500) {
          throw invalid(
            'parameter_invalid_string',
            'Metadata keys are at most 40 characters, values 500',
            `${name}[${metaKey}]`,
          );
        }
      }
    } else if (Array.isArray(allowed)) {
      if (!Array.isArray(value)) throw invalid('parameter_invalid_array', 'Invalid array', name);
    } else if (allowed === true) {
      if (typeof value !== 'string') throw invalid('parameter_invalid_string', `Invalid string`, name);
    } else {
      if (typeof value !== 'object' || Array.isArray(value))
        throw invalid('parameter_invalid_string', 'Invalid hash', name);
      checkShape(value as Params, allowed, name);
    }
  }
}

export function integer(params: Params, name: string, required: boolean): number | null {
  const value = params[name];
  if (value === undefined) {
    if (required) throw invalid('parameter_missing', `Missing required param: ${name}.`, name);
    return null;
  }
  if (typeof value !== 'string' || !/^\d+$/.test(value))
    throw invalid('parameter_invalid_integer', 'Invalid integer', name);
  return Number(value);
}

export function boolean(value: unknown, name: string): boolean | null {
  if (value === undefined) return null;
  if (value !== 'true' && value !== 'false') throw invalid('parameter_invalid_boolean', 'Invalid boolean', name);
  return value === 'true';
}

export function oneOf(value: unknown, name: string, allowed: string[]): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw invalid('parameter_invalid_string', `Invalid ${name}: must be one of ${allowed.join(', ')}`, name);
  }
  return value;
}

/** The card's raw data as Stripe checks it: 402 card errors for a number, expiry or code it cannot use. */
export function checkCard(card: Params | undefined): string {
  const number = card?.number;
  if (typeof number !== 'string' || !/^\d{12,19}$/.test(number)) {
    throw new StripeRefusal(402, {
      type: 'card_error',
      code: 'incorrect_number',
      message: 'Your card number is incorrect.',
      param: 'number',
    });
  }
  const expMonth = integer(card!, 'exp_month', true)!;
  const expYear = integer(card!, 'exp_year', true)!;
  if (expYear < new Date().getUTCFullYear()) {
    throw new StripeRefusal(402, {
      type: 'card_error',
      code: 'expired_card',
      decline_code: 'expired_card',
      message: 'Your card has expired.',
      param: 'exp_year',
    });
  }
  if (expMonth < 1 || expMonth > 12)
    throw new StripeRefusal(402, {
      type: 'card_error',
      code: 'invalid_expiry_month',
      message: "Your card's expiration month is invalid.",
      param: 'exp_month',
    });
  if (card!.cvc !== undefined && !/^\d{3,4}$/.test(String(card!.cvc))) {
    throw new StripeRefusal(402, {
      type: 'card_error',
      code: 'invalid_cvc',
      message: "Your card's security code is invalid.",
      param: 'cvc',
    });
  }
  return number;
}

/** Stripe's form encoding: `a[b][c]=v` for hashes, `a[0]=v` for lists. */
export function parseForm(text: string): Params {
  const root: Params = {};
  for (const [name, value] of new URLSearchParams(text)) {
    const head = /^[^[]+/.exec(name)?.[0] ?? name;
    const path = [head, ...[...name.slice(head.length).matchAll(/\[([^\]]*)\]/g)].map((match) => match[1]!)];
    let node: any = root;
    for (let index = 0; index < path.length - 1; index += 1) {
      const segment = path[index]!;
      const nextIsIndex = /^\d*$/.test(path[index + 1]!);
      node[segment] ??= nextIsIndex ? [] : {};
      node = node[segment];
    }
    const last = path[path.length - 1]!;
    if (Array.isArray(node) && last === '') node.push(value);
    else node[last] = value;
  }
  return root;
}
