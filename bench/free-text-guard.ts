/**
 * The card-number guard's cost per request body (docs/decisions/0045-card-numbers-in-free-text.md):
 * the MIT body the payment benchmarks send, and one with every usual free-text field filled in.
 * `node --import tsx bench/free-text-guard.ts` prints microseconds per body; compare with the CPU a
 * payment costs (2 cores ÷ MIT payments/s in docs/performance.md).
 */
import { cardNumberInFreeText } from '../src/http/free-text-guard.js';
import { CreatePaymentBody } from '../src/payments/schemas.js';
import { paymentBody } from './api.js';

const mit = JSON.parse(
  paymentBody({ customerId: 'cus_7301542996317045834', paymentMethodId: 'pm_7301542996317045834' }, 'mit'),
) as unknown;
const full = {
  ...(mit as object),
  orderNo: 'order-10045-abc',
  description: 'Monthly plan, invoice 2026-11 for account 12345',
  ip: '203.0.113.7',
  notifyUrl: 'https://shop.example/hooks/tessera?order=10045',
  shipping: { firstName: 'Ada', lastName: 'Lovelace', address: { line1: '12 Main Street', postalCode: '10115' } },
  lineItems: [{ name: 'Plan Pro', amount: 19.99, quantity: 1, description: 'Pro plan, monthly' }],
};

function microsecondsPerBody(body: unknown): number {
  for (let index = 0; index < 20_000; index += 1) cardNumberInFreeText(CreatePaymentBody, body);
  const count = 200_000;
  const started = process.hrtime.bigint();
  for (let index = 0; index < count; index += 1) {
    if (cardNumberInFreeText(CreatePaymentBody, body)) throw new Error('the body holds no card number');
  }
  return Number(process.hrtime.bigint() - started) / count / 1000;
}

console.log(
  `MIT body: ${microsecondsPerBody(mit).toFixed(2)} µs; full body: ${microsecondsPerBody(full).toFixed(2)} µs`,
);
