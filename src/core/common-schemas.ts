import { Type, type Static } from 'typebox';
import { DomainError } from './errors.js';

/** Schemas shared by several resources (docs/api.md#customers Address and the like). */

export const CountryCode = Type.String({
  pattern: '^[A-Za-z]{2}$',
  'x-rule': 'must be a two-letter country code',
  description: 'ISO 3166-1 alpha-2; answered in upper case',
});

export const Address = Type.Object(
  {
    city: Type.Optional(Type.String({ maxLength: 100 })),
    country: Type.Optional(CountryCode),
    line1: Type.Optional(Type.String({ maxLength: 200 })),
    line2: Type.Optional(Type.String({ maxLength: 200, description: 'May be empty' })),
    postalCode: Type.Optional(Type.String({ maxLength: 20 })),
    state: Type.Optional(Type.String({ maxLength: 100 })),
  },
  { additionalProperties: false },
);
export type Address = Static<typeof Address>;

/** The answered form of an address: every field present, null when not given. */
export const AddressOut = Type.Object({
  city: Type.Union([Type.String(), Type.Null()]),
  country: Type.Union([Type.String(), Type.Null()]),
  line1: Type.Union([Type.String(), Type.Null()]),
  line2: Type.Union([Type.String(), Type.Null()]),
  postalCode: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union([Type.String(), Type.Null()]),
});
export type AddressOut = Static<typeof AddressOut>;

export function normalizeAddress(address: Address | undefined): AddressOut | null {
  if (!address) return null;
  return {
    city: address.city ?? null,
    country: address.country?.toUpperCase() ?? null,
    line1: address.line1 ?? null,
    line2: address.line2 ?? null,
    postalCode: address.postalCode ?? null,
    state: address.state ?? null,
  };
}

export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Phone = Type.String({
  pattern: '^[0-9+() .\\-]{3,32}$',
  'x-rule': 'must be a phone number of 3 to 32 digits, spaces and + ( ) . -',
});
export const PersonName = Type.String({ minLength: 1, maxLength: 100 });
/**
 * Marks a text field (an id, a URL) whose `""` means "not given" when it is optional, as existing
 * clients send it (docs/api.md#compatibility-with-existing-clients; src/http/request-shapes.ts). Free text keeps `""`.
 */
export const emptyIsAbsent = { 'x-empty-is-absent': true } as const;

/**
 * Marks a text field that the card-number guard leaves alone (src/http/free-text-guard.ts): the
 * card number itself and identifiers the merchant owns (docs/decisions/0045-card-numbers-in-free-text.md).
 */
export const notFreeText = { 'x-free-text': false } as const;

export const HttpUrl = Type.String({
  maxLength: 2048,
  pattern: '^https?://[^\\s/$.?#][^\\s]*$',
  'x-rule': 'must be an http or https URL',
  ...emptyIsAbsent,
});

/** The id of the path repeated in the body or query, as the provider's SDKs send it (docs/api.md#compatibility-with-existing-clients). */
export const RepeatedPathId = (name: string) =>
  Type.String({
    maxLength: 64,
    description: `Accepted for compatibility: the ${name} of the path, repeated. Must be equal (or ""); a different id is refused`,
  });

export const Shipping = Type.Object(
  {
    firstName: Type.Optional(PersonName),
    lastName: Type.Optional(PersonName),
    phone: Type.Optional(Phone),
    address: Type.Optional(Address),
  },
  { additionalProperties: false },
);
export type Shipping = Static<typeof Shipping>;

export const ShippingOut = Type.Object({
  firstName: Type.Union([Type.String(), Type.Null()]),
  lastName: Type.Union([Type.String(), Type.Null()]),
  phone: Type.Union([Type.String(), Type.Null()]),
  address: Type.Union([AddressOut, Type.Null()]),
});
export type ShippingOut = Static<typeof ShippingOut>;

export function normalizeShipping(shipping: Shipping | undefined): ShippingOut | null {
  if (!shipping) return null;
  return {
    firstName: shipping.firstName ?? null,
    lastName: shipping.lastName ?? null,
    phone: shipping.phone ?? null,
    address: normalizeAddress(shipping.address),
  };
}

export const Nullable = <T extends import('typebox').TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timestamp = Type.String({
  description: 'ISO 8601 UTC with milliseconds and Z',
  examples: ['2026-11-22T18:30:00.000Z'],
});

/** Keys of `metadata`: at most this many, each 1–40 characters (as Stripe's). */
export const metadataLimits = { keys: 50, keyLength: 40, valueLength: 500 } as const;

/** The merchant's own key–value pairs, stored and answered as given. */
export const Metadata = Type.Object(
  {},
  {
    additionalProperties: Type.String({
      maxLength: metadataLimits.valueLength,
      'x-rule': `must be text of at most ${metadataLimits.valueLength} characters`,
    }),
    maxProperties: metadataLimits.keys,
    'x-rule': `must be an object of at most ${metadataLimits.keys} keys with text values`,
    description: `Your own key–value pairs: at most ${metadataLimits.keys} keys of 1–${metadataLimits.keyLength} characters, text values of at most ${metadataLimits.valueLength}`,
    examples: [{ orderId: '6735' }],
  },
);
export type Metadata = Record<string, string>;

export const MetadataOut = Type.Object({}, { additionalProperties: Type.String() });

/**
 * Metadata as stored and answered: null when there is none (an empty object would be sent as
 * null in an event body anyway, docs/webhooks.md#what-is-sent). Keys are checked here, since JSON Schema's own
 * message for a key would not name the rule.
 */
export function normalizeMetadata(value: object | undefined, param = 'metadata'): Metadata | null {
  if (value === undefined) return null;
  // The schema (Metadata) has checked that every value is text.
  const metadata = value as Metadata;
  const keys = Object.keys(metadata);
  for (const key of keys) {
    if (key.length === 0 || key.length > metadataLimits.keyLength) {
      throw new DomainError(
        'invalid_request',
        `${param} keys must be 1 to ${metadataLimits.keyLength} characters long`,
        {
          param,
          rule: 'key_length',
        },
      );
    }
  }
  return keys.length === 0 ? null : metadata;
}

const CreatedBound = Type.String({
  format: 'date-time',
  'x-rule': 'must be an ISO 8601 timestamp',
  examples: ['2026-11-22T18:30:00.000Z'],
});

/**
 * List filters on the creation time (docs/api.md#lists). Query keys are literal, brackets included:
 * `created[gte]=2026-11-01T00:00:00.000Z`; `created.gte` (the Java SDK's form) is taken too.
 */
export const CreatedFilters = {
  'created[gt]': Type.Optional(CreatedBound),
  'created[gte]': Type.Optional(CreatedBound),
  'created[lt]': Type.Optional(CreatedBound),
  'created[lte]': Type.Optional(CreatedBound),
};

/** The bounds of CreatedFilters as dates. */
export function createdBounds(query: Partial<Record<keyof typeof CreatedFilters, string>>) {
  const date = (value: string | undefined) => (value === undefined ? undefined : new Date(value));
  return {
    createdGt: date(query['created[gt]']),
    createdGte: date(query['created[gte]']),
    createdLt: date(query['created[lt]']),
    createdLte: date(query['created[lte]']),
  };
}
