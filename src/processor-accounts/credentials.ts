/**
 * What each processor's credentials must look like (docs/processors.md, Connecting a processor),
 * checked field by field so that an error names the field and the rule and never echoes a value.
 */
import { invalidField } from '../core/errors.js';
import type { ProcessorName } from './schemas.js';

export type Credentials = Record<string, string>;

interface FieldRule {
  pattern: RegExp;
  rule: string;
}

const rules: Record<ProcessorName, Record<string, FieldRule>> = {
  adyen: {
    apiKey: {
      pattern: /^\S{16,2048}$/,
      rule: "Adyen's API key for the Checkout API (16 or more characters, no spaces)",
    },
    merchantAccount: { pattern: /^[A-Za-z0-9_.-]{1,80}$/, rule: 'the Adyen merchant account name' },
    hmacKey: {
      pattern: /^(?:[0-9A-Fa-f]{2}){16,64}$/,
      rule: 'the HMAC key in hex, as Adyen shows it (32 to 128 hex digits)',
    },
  },
  stripe: {
    secretKey: {
      pattern: /^(?:sk|rk)_(?:test|live)_[A-Za-z0-9]{10,247}$/,
      rule: 'a Stripe secret or restricted key (sk_… or rk_…)',
    },
    webhookSecret: {
      pattern: /^whsec_[A-Za-z0-9+/=]{10,200}$/,
      rule: "the webhook endpoint's signing secret (whsec_…)",
    },
  },
};

/** The field whose last 4 characters the account shows (credentialsHint). */
export const hintField: Record<ProcessorName, string> = { adyen: 'apiKey', stripe: 'secretKey' };

export function checkCredentials(
  processor: ProcessorName,
  mode: 'test' | 'live',
  credentials: Credentials,
): Credentials {
  const expected = rules[processor];
  for (const field of Object.keys(credentials)) {
    if (!(field in expected)) {
      throw invalidField(
        `credentials.${field}`,
        `credentials.${field} is not a ${processor} credential; expected ${Object.keys(expected).join(', ')}`,
        'unknown_field',
      );
    }
  }
  for (const [field, { pattern, rule }] of Object.entries(expected)) {
    const value = credentials[field];
    if (value === undefined || value === '') {
      throw invalidField(
        `credentials.${field}`,
        `credentials.${field} is required for ${processor}: ${rule}`,
        'required',
      );
    }
    if (!pattern.test(value)) {
      throw invalidField(`credentials.${field}`, `credentials.${field} must be ${rule}`, 'format');
    }
  }
  // A Stripe key says which environment it belongs to: a test key cannot take live payments.
  if (processor === 'stripe') {
    const keyMode = /^[a-z]{2}_(test|live)_/.exec(credentials.secretKey ?? '')?.[1];
    if (keyMode !== mode) {
      throw invalidField(
        'credentials.secretKey',
        `credentials.secretKey is a ${keyMode} key; a ${mode} account needs a ${mode} key`,
        'mode',
      );
    }
  }
  return Object.fromEntries(Object.keys(expected).map((field) => [field, credentials[field]!]));
}

/** The processors' public endpoints: the code's defaults (tests point baseUrl at stand-ins). */
export const defaultBaseUrls: Record<ProcessorName, Record<'test' | 'live', string | null>> = {
  adyen: { test: 'https://checkout-test.adyen.com/v71', live: null },
  stripe: { test: 'https://api.stripe.com', live: 'https://api.stripe.com' },
};

/** Adyen's Disputes API, a service apart from Checkout; Stripe's disputes are on its one API. */
export const defaultDisputesBaseUrls: Record<ProcessorName, Record<'test' | 'live', string | null>> = {
  adyen: {
    test: 'https://ca-test.adyen.com/ca/services/DisputeService/v30',
    live: 'https://ca-live.adyen.com/ca/services/DisputeService/v30',
  },
  stripe: { test: null, live: null },
};

/** A base URL as given, checked: http(s) only, and https in production; Stripe's is an origin. */
export function checkBaseUrl(
  value: string,
  production: boolean,
  processor: ProcessorName,
  field: 'baseUrl' | 'disputesBaseUrl' = 'baseUrl',
): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidField(field, `${field} must be an absolute URL (https://…)`, 'url');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw invalidField(field, `${field} must be an https:// URL`, 'url');
  }
  if (url.protocol === 'http:' && production) {
    throw invalidField(field, `${field} must be https:// in production`, 'https');
  }
  if (url.username || url.password || url.search || url.hash) {
    throw invalidField(field, `${field} must not carry credentials, a query or a fragment`, 'url');
  }
  if (processor === 'stripe' && field === 'baseUrl' && url.pathname !== '/') {
    throw invalidField(
      'baseUrl',
      'baseUrl of a Stripe account is an origin only (https://api.stripe.com), without a path',
      'origin',
    );
  }
  return value.replace(/\/+$/, '');
}
