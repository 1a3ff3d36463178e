/** The connector of each processor a processor account can name (docs/processors.md). */
import type { ConnectorFactory } from './connectors.js';
import type { ProcessorName } from './schemas.js';

const notYet =
  (name: string): ConnectorFactory =>
  () => {
    throw new Error(`The ${name} connector is not built into this version`);
  };

export const connectorFactories: Record<ProcessorName, ConnectorFactory> = {
  adyen: notYet('adyen'),
  stripe: notYet('stripe'),
};
