/** The connector of each processor a processor account can name (docs/processors.md). */
import { createAdyenProcessor } from '../processor/adyen/adyen-processor.js';
import { createStripeProcessor } from '../processor/stripe/connector.js';
import type { ConnectorFactory } from './connectors.js';
import type { ProcessorName } from './schemas.js';

const credential = (credentials: Record<string, string>, name: string): string => {
  const value = credentials[name];
  if (value === undefined) throw new Error(`A processor account's credentials lack ${name}`);
  return value;
};

export const connectorFactories: Record<ProcessorName, ConnectorFactory> = {
  adyen: ({ credentials, baseUrl, disputesBaseUrl, timeoutMs }) =>
    createAdyenProcessor({
      apiKey: credential(credentials, 'apiKey'),
      merchantAccount: credential(credentials, 'merchantAccount'),
      hmacKey: credential(credentials, 'hmacKey'),
      baseUrl,
      ...(disputesBaseUrl === null ? {} : { disputesBaseUrl }),
      timeoutMs,
    }),
  stripe: ({ credentials, baseUrl, timeoutMs, clock }) =>
    createStripeProcessor({
      secretKey: credential(credentials, 'secretKey'),
      webhookSecret: credential(credentials, 'webhookSecret'),
      baseUrl,
      timeoutMs,
      clock,
    }),
};
