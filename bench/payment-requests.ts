/** The merchant API requests of `npm run bench`: customers and payment methods, payments and refunds. */
import { paymentBody } from './api.js';
import { cards } from './cards.js';
import { closedLoop, type PhaseResult, type RequestSpec } from './load.js';
import type { Settings } from './run-settings.js';

const apiBase = '/api/services/v1';

export interface Pair {
  customerId: string;
  paymentMethodId: string;
}

export interface Target {
  baseUrl: string;
  privateKey: string;
  pid: number;
  withPostgres: boolean;
}

const idIn = (prefix: string) => new RegExp(`"id":"(${prefix}_\\d+)"`);

/** `count` customers and as many card payment methods, through the API, at full concurrency. */
export async function createPairs(
  target: Target,
  settings: Settings,
  count: number,
): Promise<{ pairs: Pair[]; phases: PhaseResult[] }> {
  const connections = Math.min(settings.connections, count);
  const headers = { authorization: `Bearer ${target.privateKey}` };
  const customerIds: string[] = [];
  let customerNumber = 0;
  const customers = await closedLoop({
    name: 'setup: POST /customers/create',
    baseUrl: target.baseUrl,
    connections,
    amount: count,
    payment: false,
    servicePid: target.pid,
    withPostgres: target.withPostgres,
    request: {
      path: `${apiBase}/customers/create`,
      headers,
      nextBody: () => {
        customerNumber += 1;
        return JSON.stringify({
          firstName: 'Bench',
          lastName: `Customer ${customerNumber}`,
          email: `bench${customerNumber}@example.com`,
        });
      },
      onSuccess: (body) => customerIds.push(idIn('cus').exec(body)![1]!),
    },
  });
  const methodIds: string[] = [];
  let methodNumber = 0;
  const methods = await closedLoop({
    name: 'setup: POST /payment_methods/create',
    baseUrl: target.baseUrl,
    connections,
    amount: count,
    payment: false,
    servicePid: target.pid,
    withPostgres: target.withPostgres,
    request: {
      path: `${apiBase}/payment_methods/create`,
      headers,
      nextBody: () => {
        const card = cards[methodNumber++ % cards.length]!;
        return JSON.stringify({ type: 'card', card: { ...card, expMonth: '12', expYear: '2030' } });
      },
      onSuccess: (body) => methodIds.push(idIn('pm').exec(body)![1]!),
    },
  });
  for (const phase of [customers, methods]) {
    if (phase.checks.failures > 0) throw new Error(`${phase.name}: ${phase.checks.firstFailure}`);
  }
  const pairs = customerIds.slice(0, count).map((customerId, index) => ({
    customerId,
    paymentMethodId: methodIds[index]!,
  }));
  if (pairs.length < count || methodIds.length < count) throw new Error(`only ${pairs.length} of ${count} pairs made`);
  return { pairs, phases: [customers, methods] };
}

export function storingRequest(target: Target, pairs: Pair[], bound?: Pair[]): RequestSpec {
  let next = 0;
  return {
    path: `${apiBase}/payment/create`,
    headers: { authorization: `Bearer ${target.privateKey}` },
    nextBody: () => {
      // autocannon builds each connection's first request before it knows how many it will send;
      // `amount` keeps the number sent to the pool's size, so no pair is ever used twice.
      return paymentBody(pairs[next++ % pairs.length]!);
    },
    onSuccess: bound
      ? (body) => {
          if (!body.includes('"status":"succeeded"')) return;
          const customerId = /"customerId":"(cus_\d+)"/.exec(body)?.[1];
          const paymentMethodId = /"paymentMethod":"(pm_\d+)"/.exec(body)?.[1];
          if (customerId && paymentMethodId) bound.push({ customerId, paymentMethodId });
        }
      : undefined,
  };
}

export function mitRequest(target: Target, pairs: Pair[], succeeded?: string[]): RequestSpec {
  let next = 0;
  return {
    path: `${apiBase}/payment/create`,
    headers: { authorization: `Bearer ${target.privateKey}` },
    nextBody: () => paymentBody(pairs[next++ % pairs.length]!, 'mit'),
    onSuccess: succeeded
      ? (body) => {
          const id = body.includes('"status":"succeeded"') ? idIn('pt').exec(body)?.[1] : undefined;
          if (id && succeeded.length < refundablePayments) succeeded.push(id);
        }
      : undefined,
  };
}

/** How many succeeded MIT payments the refund phase spreads its refunds over. */
const refundablePayments = 5000;

/**
 * A partial refund of one minor unit, round-robin over succeeded payments of 1000 units each: a
 * payment is refunded again only after every other one, so concurrent refunds rarely wait on the
 * same payment's row, as when a merchant refunds many orders.
 */
export function refundRequest(target: Target, paymentIds: string[]): RequestSpec {
  let next = 0;
  return {
    path: `${apiBase}/refunds/create`,
    headers: { authorization: `Bearer ${target.privateKey}` },
    nextBody: () => JSON.stringify({ paymentId: paymentIds[next++ % paymentIds.length]!, amount: '1' }),
  };
}
