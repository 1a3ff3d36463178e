/**
 * The stand-ins for Stripe and Adyen (test/helpers/) in a process of their own, for the connector
 * phase of `npm run bench` (bench/connector-overhead.ts): their CPU is then neither the service's
 * nor the load generator's. Prints one line of JSON with their addresses and credentials, then
 * answers until it is stopped (or its parent ends).
 */
import { startAdyenStandIn } from '../test/helpers/adyen-stand-in.js';
import { startStripeStandIn } from '../test/helpers/stripe-stand-in.js';

export interface StandIns {
  stripe: { url: string; secretKey: string; webhookSecret: string };
  adyen: { url: string; apiKey: string; merchantAccount: string; hmacKey: string };
}

const stripe = await startStripeStandIn();
const adyen = await startAdyenStandIn();
const ready: StandIns = {
  stripe: { url: stripe.url, secretKey: stripe.secretKey, webhookSecret: stripe.webhookSecret },
  adyen: { url: adyen.url, apiKey: adyen.apiKey, merchantAccount: adyen.merchantAccount, hmacKey: adyen.hmacKey },
};
process.stdout.write(`stand-ins ${JSON.stringify(ready)}\n`);
const stop = () => void Promise.all([stripe.close(), adyen.close()]).finally(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
