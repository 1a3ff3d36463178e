/** The webhook benchmark's APIs: the receiver's statistics, and the merchants, endpoints and payments it makes. */
import { setTimeout as sleep } from 'node:timers/promises';
import { call, paymentBody } from './api.js';
import { closedLoop, type PhaseResult, type RequestSpec } from './load.js';
import { cards } from './cards.js';
import type { ChildServer } from './processes.js';
import type { Settings } from './webhooks-settings.js';

export const apiBase = '/api/services/v1';

export interface ReceiverStats {
  requests: number;
  distinct: number;
  duplicates: number;
  unparsed: number;
  firstArrivalMs: number | null;
  lastArrivalMs: number | null;
  byPath: Record<string, number>;
}

export class ReceiverClient {
  constructor(
    readonly server: ChildServer,
    readonly paths: string[],
  ) {}

  private async get<T>(route: string, method = 'GET'): Promise<T> {
    const response = await fetch(`${this.server.url}/_bench/${route}`, { method, signal: AbortSignal.timeout(30_000) });
    return (await response.json()) as T;
  }
  stats = () => this.get<ReceiverStats>('stats');
  records = () => this.get<{ arrivalMs: number[]; createdMs: number[]; endpointKind: number[] }>('records');
  sample = () => this.get<{ path: string; body: string } | null>('sample');
  reset = () => this.get<unknown>('reset', 'POST');

  /** Waits until `count` distinct deliveries have arrived; then a moment more, for duplicates. */
  async waitFor(count: number, timeoutMs: number): Promise<ReceiverStats> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const stats = await this.stats();
      if (stats.distinct >= count) {
        await sleep(300);
        return this.stats();
      }
      if (Date.now() > deadline) {
        throw new Error(`the receiver got ${stats.distinct} of ${count} deliveries within ${timeoutMs / 1000} s`);
      }
      await sleep(25);
    }
  }
}

export interface Merchant {
  privateKey: string;
  endpointToken: string;
  pairs: Array<{ customerId: string; paymentMethodId: string }>;
}

/** Every answered payment with an outcome is one event, so this many notifications. */
export const eventsOf = (phase: PhaseResult) => phase.checks.succeeded + phase.checks.declined;

/** One call per request through closedLoop, collecting the ids it answers. */
async function createMany(
  service: ChildServer,
  merchant: { privateKey: string },
  route: string,
  count: number,
  connections: number,
  nextBody: () => string,
  prefix: string,
): Promise<string[]> {
  const ids: string[] = [];
  const idPattern = new RegExp(`"id":"(${prefix}_\\d+)"`);
  const phase = await closedLoop({
    name: `setup: ${route}`,
    baseUrl: service.url,
    connections: Math.min(connections, count),
    amount: count,
    payment: false,
    servicePid: null,
    request: {
      path: `${apiBase}${route}`,
      headers: { authorization: `Bearer ${merchant.privateKey}` },
      nextBody,
      onSuccess: (body) => ids.push(idPattern.exec(body)![1]!),
    },
  });
  if (phase.checks.failures > 0 || ids.length < count) throw new Error(`${phase.name}: ${phase.checks.firstFailure}`);
  return ids;
}

/** K merchants, each with MIT on, one endpoint on its own receiver path, and stored card pairs. */
export async function createMerchants(
  settings: Settings,
  service: ChildServer,
  adminKey: string,
  receiver: ReceiverClient,
): Promise<{ merchants: Merchant[]; bindingEvents: number }> {
  const pairsPerMerchant = Math.max(4, Math.ceil((2 * settings.connections) / settings.endpoints));
  const merchants: Merchant[] = [];
  let bindingEvents = 0;
  for (let index = 0; index < settings.endpoints; index += 1) {
    const created = await call(`${service.url}/admin/v1/merchants/create`, adminKey, {
      name: `Webhook benchmark merchant ${index + 1}`,
      tokenization: true,
      mit: true,
    });
    const privateKey: string = created.keys.privateKey;
    const endpoint = await call(`${service.url}${apiBase}/webhook_endpoints/create`, privateKey, {
      url: `${receiver.server.url}${receiver.paths[index]}`,
      legacyNotifications: true,
    });
    let number = 0;
    const customerIds = await createMany(
      service,
      { privateKey },
      '/customers/create',
      pairsPerMerchant,
      settings.connections,
      () => JSON.stringify({ firstName: 'Bench', lastName: `Customer ${++number}`, email: `b${number}@example.com` }),
      'cus',
    );
    const methodIds = await createMany(
      service,
      { privateKey },
      '/payment_methods/create',
      pairsPerMerchant,
      settings.connections,
      () => {
        const card = cards[number++ % cards.length]!;
        return JSON.stringify({ type: 'card', card: { ...card, expMonth: '12', expYear: '2030' } });
      },
      'pm',
    );
    const pairs = customerIds.map((customerId, at) => ({ customerId, paymentMethodId: methodIds[at]! }));
    // Each pair is bound by one storing payment; MIT payments then reuse it, as a subscription does.
    let next = 0;
    const binding = await closedLoop({
      name: 'setup: storing payments',
      baseUrl: service.url,
      connections: Math.min(settings.connections, pairs.length),
      amount: pairs.length,
      payment: true,
      servicePid: null,
      request: {
        path: `${apiBase}/payment/create`,
        headers: { authorization: `Bearer ${privateKey}` },
        nextBody: () => {
          const pair = pairs[next++]!;
          return paymentBody(pair);
        },
      },
    });
    if (binding.checks.succeeded !== pairs.length) throw new Error(`storing payments: ${binding.checks.firstFailure}`);
    bindingEvents += eventsOf(binding);
    merchants.push({ privateKey, endpointToken: endpoint.token, pairs });
  }
  return { merchants, bindingEvents };
}

/** MIT payments, round-robin over the merchants (and so over the endpoints). */
export function mitAcross(merchants: Merchant[]): RequestSpec {
  let next = 0;
  let current = merchants[0]!;
  return {
    path: `${apiBase}/payment/create`,
    headers: {},
    nextBody: () => {
      current = merchants[next % merchants.length]!;
      const pair = current.pairs[Math.floor(next / merchants.length) % current.pairs.length]!;
      next += 1;
      return paymentBody(pair, 'mit');
    },
    nextHeaders: () => ({ authorization: `Bearer ${current.privateKey}` }),
  };
}
