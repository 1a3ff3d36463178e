import { Type, type Static } from 'typebox';
import { FinanceSettings, FinanceSettingsInput } from '../ledger/settings-schemas.js';

export const MerchantParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const CreateMerchantBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    tokenization: Type.Optional(Type.Boolean()),
    mit: Type.Optional(Type.Boolean()),
    ownerEmail: Type.Optional(
      Type.String({
        format: 'email',
        maxLength: 254,
        description:
          "The merchant's first dashboard Owner; the answer's ownerSetPasswordUrl is a one-time link (72 h) to choose a password",
      }),
    ),
  },
  { additionalProperties: false },
);
export type CreateMerchantBody = Static<typeof CreateMerchantBody>;

export const WebsiteOrigins = Type.Array(Type.String({ maxLength: 200 }), {
  maxItems: 20,
  description:
    "Origins of the merchant's website (`https://shop.example`: scheme, host, optional port; no path): the pages allowed to frame the card field of tessera.js (CSP frame-ancestors). The whole list is replaced; `[]` empties it.",
  examples: [['https://shop.example', 'https://www.shop.example']],
});

const BrandColor = Type.Union([Type.String({ maxLength: 7 }), Type.Null()], {
  description:
    "The hosted pages' accent and Pay button colour, `#rrggbb`; an empty string removes it (Tessera's blue). The button's text is black or white, whichever reads better on it.",
  examples: ['#1f5fbf'],
});

const LogoUrl = Type.Union([Type.String({ maxLength: 2048 }), Type.Null()], {
  description:
    'An https URL of the logo shown above the hosted pages (at most 40 px high); an empty string removes it. The pages allow images from its origin only (CSP img-src).',
  examples: ['https://shop.example/logo.png'],
});

export const UpdateMerchantBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    tokenization: Type.Optional(Type.Boolean()),
    mit: Type.Optional(Type.Boolean()),
    websiteOrigins: Type.Optional(WebsiteOrigins),
    brandColor: Type.Optional(BrandColor),
    logoUrl: Type.Optional(LogoUrl),
    // docs/balances.md: the merchant's fees, availability, payout schedule and bank account.
    ...FinanceSettingsInput,
  },
  { additionalProperties: false },
);
export type UpdateMerchantBody = Static<typeof UpdateMerchantBody>;

export const Merchant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tokenization: Type.Boolean({ description: 'May make storing payments (setupFutureUsage=on), CIT and MIT' }),
  mit: Type.Boolean({ description: 'May make merchant-initiated payments (subsequentInitialType=mit)' }),
  websiteOrigins: Type.Array(Type.String(), {
    description: 'The origins whose pages may frame the card field of tessera.js (CSP frame-ancestors)',
  }),
  brandColor: Type.Union([Type.String(), Type.Null()], {
    description: 'The colour of the hosted pages (`#rrggbb`), null for Tessera’s',
  }),
  logoUrl: Type.Union([Type.String(), Type.Null()], { description: 'The logo of the hosted pages, null for none' }),
  ...FinanceSettings.properties,
  created: Type.String({ format: 'date-time' }),
});
export type Merchant = Static<typeof Merchant>;

export const MerchantWithKeys = Type.Object({
  ...Merchant.properties,
  keys: Type.Object({
    privateKey: Type.String({ description: 'test_pr_… (live_pr_… for live keys), shown only here' }),
    publicKey: Type.String({ description: 'test_pu_… (live_pu_… for live keys), shown only here' }),
  }),
  ownerSetPasswordUrl: Type.Optional(
    Type.String({ description: "With ownerEmail: the Owner's one-time set-password link, shown only here" }),
  ),
});
export type MerchantWithKeys = Static<typeof MerchantWithKeys>;

export const RollKeysBody = Type.Object(
  {
    mode: Type.Optional(
      Type.String({
        maxLength: 16,
        description:
          '`test` (the default) or `live`: live keys (`live_pr_…`, `live_pu_…`) only while the merchant has an enabled live processor account (409 `no_live_processor` otherwise)',
        examples: ['live'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type RollKeysBody = Static<typeof RollKeysBody>;
