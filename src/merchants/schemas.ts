import { Type, type Static } from 'typebox';

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

export const UpdateMerchantBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    tokenization: Type.Optional(Type.Boolean()),
    mit: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
export type UpdateMerchantBody = Static<typeof UpdateMerchantBody>;

export const Merchant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tokenization: Type.Boolean({ description: 'May make storing payments (setupFutureUsage=on), CIT and MIT' }),
  mit: Type.Boolean({ description: 'May make merchant-initiated payments (subsequentInitialType=mit)' }),
  created: Type.String({ format: 'date-time' }),
});
export type Merchant = Static<typeof Merchant>;

export const MerchantWithKeys = Type.Object({
  ...Merchant.properties,
  keys: Type.Object({
    privateKey: Type.String({ description: 'test_pr_…, shown only here' }),
    publicKey: Type.String({ description: 'test_pu_…, shown only here' }),
  }),
  ownerSetPasswordUrl: Type.Optional(
    Type.String({ description: "With ownerEmail: the Owner's one-time set-password link, shown only here" }),
  ),
});
export type MerchantWithKeys = Static<typeof MerchantWithKeys>;
