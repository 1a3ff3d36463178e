import { Type, type Static } from 'typebox';

export const processorNames = ['adyen', 'stripe'] as const;
export type ProcessorName = (typeof processorNames)[number];

export const ProcessorAccountParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

/**
 * The credentials are checked by the service against the processor named beside them (Adyen:
 * apiKey, merchantAccount, hmacKey; Stripe: secretKey, webhookSecret), so that the error names the
 * missing or malformed field rather than a union of both shapes.
 */
const Credentials = Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 4096 }), {
  description:
    'Adyen: `{apiKey, merchantAccount, hmacKey}` (hmacKey in hex, as Adyen shows it); Stripe: `{secretKey, webhookSecret}` (`sk_…` or `rk_…`, `whsec_…`). Sealed by the vault and never shown again.',
  examples: [
    {
      apiKey: 'AQE…',
      merchantAccount: 'ShopExampleECOM',
      hmacKey: '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056',
    },
  ],
});

const BaseUrl = Type.String({
  maxLength: 2048,
  description:
    "The processor's API address; defaults to its public endpoint (Adyen test: `https://checkout-test.adyen.com/v71`; Stripe: `https://api.stripe.com`). Adyen live needs the account's own prefix URL (`https://{prefix}-checkout-live.adyenpayments.com/checkout/v71`). `http://` only outside production.",
});

const DisputesBaseUrl = Type.String({
  maxLength: 2048,
  description:
    "Adyen only: the Disputes API's address, a service apart from Checkout (docs/processors-adyen.md, Disputes); defaults to `https://ca-test.adyen.com/ca/services/DisputeService/v30` (test) or `https://ca-live.adyen.com/ca/services/DisputeService/v30` (live). `http://` only outside production.",
});

export const CreateProcessorAccountBody = Type.Object(
  {
    processor: Type.String({ maxLength: 32, description: '`adyen` or `stripe`', examples: ['adyen'] }),
    mode: Type.String({
      maxLength: 16,
      description: "`test` (the processor's test environment, in place of the sandbox for the test keys) or `live`",
      examples: ['live'],
    }),
    credentials: Credentials,
    baseUrl: Type.Optional(BaseUrl),
    disputesBaseUrl: Type.Optional(DisputesBaseUrl),
  },
  { additionalProperties: false },
);
export type CreateProcessorAccountBody = Static<typeof CreateProcessorAccountBody>;

export const UpdateProcessorAccountBody = Type.Object(
  {
    credentials: Type.Optional(Credentials),
    baseUrl: Type.Optional(BaseUrl),
    disputesBaseUrl: Type.Optional(DisputesBaseUrl),
    status: Type.Optional(
      Type.String({
        maxLength: 16,
        description: '`enabled` or `disabled`: a disabled account takes no new payment',
        examples: ['disabled'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type UpdateProcessorAccountBody = Static<typeof UpdateProcessorAccountBody>;

export const ProcessorAccount = Type.Object({
  id: Type.String({ description: 'pa_…' }),
  merchantId: Type.String(),
  processor: Type.Union([Type.Literal('adyen'), Type.Literal('stripe')]),
  mode: Type.Union([Type.Literal('test'), Type.Literal('live')]),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')]),
  credentialsHint: Type.String({
    description: 'The last 4 characters of the API key (Adyen) or secret key (Stripe); nothing else is ever shown',
  }),
  baseUrl: Type.String(),
  disputesBaseUrl: Type.Union([Type.String(), Type.Null()], {
    description: "Adyen: the Disputes API's address (evidence and acceptance are sent there); null for Stripe",
  }),
  webhookUrl: Type.String({
    description:
      "Where the processor sends its notifications: enter it at the processor (Adyen's standard notification URL, Stripe's webhook endpoint)",
  }),
  lastNotificationAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'When the last verified notification arrived; null before the first',
  }),
  created: Type.String({ format: 'date-time' }),
  updated: Type.String({ format: 'date-time' }),
});
export type ProcessorAccount = Static<typeof ProcessorAccount>;
