import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError } from '../config-rules.js';
import { merchantCall } from './client.js';
import type { EventType } from '../events/schemas.js';
import { cliEventCode } from './event-codes.js';
import { endpointEventType } from '../events/event-types.js';

/**
 * `tessera trigger <event code>` (issue 12): makes the event happen for real, through the merchant
 * API with the sandbox test cards (docs/api.md), so that every webhook a merchant will receive can
 * be produced on demand, with the objects it is about.
 */
export const triggerUsage = `  trigger EVENT [--json]         make EVENT happen through the API with sandbox cards and print the ids
                                 (payment.*, refund.*, invoice.* and Invoice.*: every docs/webhooks.md#event-codes code;
                                 dispute.created and dispute.funds_withdrawn)`;

/** The few fields of the API's answers a recipe reads. */
interface Answer {
  id: string;
  paymentId?: string | null;
}
type Call = (method: 'GET' | 'POST' | 'DELETE', route: string, body?: unknown) => Promise<Answer>;
type Ids = Record<string, string>;

/** What a recipe made, the object its event is about, and a note when the event comes later. */
interface Made {
  ids: Ids;
  objectId: string;
  later?: string;
}

const card = (cardNo: string) => ({
  type: 'card',
  card: { cardNo, expMonth: '12', expYear: '2030', securityCode: '123' },
});
const later = 'follows in a few seconds (the sandbox settles after TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS)';

async function payment(call: Call, cardNo: string, fields: Record<string, unknown> = {}): Promise<Ids> {
  const method = await call('POST', '/payment_methods/create', card(cardNo));
  const made = await call('POST', '/payment/create', {
    amount: '1999',
    currency: 'USD',
    paymentMethod: method.id,
    confirm: 'true',
    description: 'tessera trigger',
    ...fields,
  });
  return { paymentMethod: method.id, payment: made.id };
}

async function refund(call: Call, cardNo: string): Promise<Ids> {
  const ids = await payment(call, cardNo);
  const made = await call('POST', '/refunds/create', {
    paymentId: ids.payment,
    amount: '500',
    reason: 'requested_by_customer',
  });
  return { ...ids, refund: made.id };
}

async function customer(call: Call): Promise<string> {
  const made = await call('POST', '/customers/create', {
    firstName: 'Trigger',
    lastName: 'Test',
    email: `trigger-${randomUUID().slice(0, 8)}@example.com`,
  });
  return made.id;
}

/** A draft invoice; `bound` first gives its customer a stored card (a storing payment). */
async function invoice(call: Call, { bound = false } = {}): Promise<Ids> {
  const customerId = await customer(call);
  const ids: Ids = { customer: customerId };
  if (bound) Object.assign(ids, await payment(call, '4242424242424242', { customerId, setupFutureUsage: 'on' }));
  const made = await call('POST', '/invoices/create', {
    customerId,
    currency: 'USD',
    collectionMethod: 'send_invoice',
    lineItems: [{ description: 'tessera trigger', amount: '1999', quantity: 1 }],
  });
  return { ...ids, invoice: made.id };
}

async function openInvoice(call: Call, options: { bound?: boolean } = {}): Promise<Ids> {
  const ids = await invoice(call, options);
  await call('POST', `/invoices/${ids.invoice}/finalize`, {});
  return ids;
}

/**
 * Payout events are not triggered: a payout needs a bank account, which only the operator sets,
 * and an available balance (docs/balances.md). Of the dispute events, those that follow the
 * merchant's response are not either: they come from POST /disputes/{id}/update (docs/disputes.md).
 */
const answeredDisputeEvents = ['dispute.updated', 'dispute.closed', 'dispute.funds_reinstated'] as const;
type TriggeredType = Exclude<EventType, `payout.${string}` | (typeof answeredDisputeEvents)[number]>;
const disputeWaitMs = 30_000;

/** A payment with the fraudulent dispute card, and its dispute once it opens (docs/disputes.md, Sandbox). */
async function disputed(call: Call): Promise<Ids> {
  const ids = await payment(call, '4000000000000275');
  const deadline = Date.now() + disputeWaitMs;
  for (;;) {
    const page = (await call('GET', `/disputes?paymentId=${ids.payment}`)) as unknown as { data: Answer[] };
    const dispute = page.data[0];
    if (dispute) return { ...ids, dispute: dispute.id };
    if (Date.now() > deadline) {
      throw new Error(`no dispute opened for ${ids.payment} within ${disputeWaitMs / 1000} s`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

const recipes: Record<TriggeredType, (call: Call) => Promise<Made>> = {
  'payment.succeeded': async (call) => made(await payment(call, '4242424242424242'), 'payment'),
  'payment.failed': async (call) => made(await payment(call, '4000000000000002'), 'payment'),
  'payment.processing': async (call) => made(await payment(call, '4000000000000630'), 'payment'),
  'payment.requires_capture': async (call) =>
    made(await payment(call, '4242424242424242', { preAuth: 'y' }), 'payment'),
  'payment.canceled': async (call) => {
    const ids = await payment(call, '4242424242424242', { preAuth: 'y' });
    await call('POST', `/payment/${ids.payment}/cancel`, { cancellationReason: 'requested_by_customer' });
    return made(ids, 'payment');
  },
  'refund.pending': async (call) => made(await refund(call, '4242424242424242'), 'refund'),
  'refund.succeeded': async (call) => made(await refund(call, '4000000000007726'), 'refund'),
  'refund.failed': async (call) => ({ ...made(await refund(call, '4000000000005126'), 'refund'), later }),
  'invoice.created': async (call) => made(await invoice(call), 'invoice'),
  'invoice.deleted': async (call) => {
    const ids = await invoice(call);
    await call('DELETE', `/invoices/${ids.invoice}`);
    return made(ids, 'invoice');
  },
  'Invoice.updated': async (call) => {
    const ids = await invoice(call);
    await call('POST', `/invoices/${ids.invoice}/update`, { description: 'Updated by tessera trigger' });
    return made(ids, 'invoice');
  },
  'Invoice.sent': async (call) => {
    const ids = await openInvoice(call);
    await call('POST', `/invoices/${ids.invoice}/send`, {});
    return made(ids, 'invoice');
  },
  'Invoice.voided': async (call) => {
    const ids = await openInvoice(call);
    await call('POST', `/invoices/${ids.invoice}/void`, {});
    return made(ids, 'invoice');
  },
  'invoice.payment_succeeds': async (call) => {
    const ids = await openInvoice(call, { bound: true });
    const paid = await call('POST', `/invoices/${ids.invoice}/pay`, {});
    return made({ ...ids, invoicePayment: paid.paymentId ?? '' }, 'invoice');
  },
  // Its customer has no stored card: the attempt fails as payment_method_unavailable.
  'invoice.payment_failed': async (call) => made(await pay(call, await openInvoice(call)), 'invoice'),
  // docs/disputes.md, Sandbox: the fraudulent card's chargeback opens and withdraws its money
  // after TESSERA_SANDBOX_FOLLOW_UP_DELAY_MS (3 s by default); the command waits for it.
  'dispute.created': async (call) => made(await disputed(call), 'dispute'),
  'dispute.funds_withdrawn': async (call) => made(await disputed(call), 'dispute'),
};

async function pay(call: Call, ids: Ids): Promise<Ids> {
  await call('POST', `/invoices/${ids.invoice}/pay`, {});
  return ids;
}

function made(ids: Ids, about: string): Made {
  return { ids, objectId: ids[about]! };
}

export const triggerTypes = Object.keys(recipes) as TriggeredType[];

export async function triggerCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { url: { type: 'string' }, key: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals[0] === undefined) throw new ConfigError(`trigger takes one of: ${triggerTypes.join(', ')}`);
  const type = cliEventCode('trigger', positionals[0], { exact: true });
  if ((answeredDisputeEvents as readonly string[]).includes(type)) {
    throw new ConfigError(
      `trigger: ${type} is not triggered: it follows the merchant's response to a dispute; trigger dispute.created, then POST /disputes/{id}/update or /accept (docs/disputes.md)`,
    );
  }
  if (!Object.hasOwn(recipes, type)) {
    throw new ConfigError(
      `trigger: ${type} is not triggered: a payout needs a bank account set by the operator and an available balance; make one with POST /payouts/create, and cancel it at once with POST /payouts/{id}/cancel for payout.canceled (docs/balances.md)`,
    );
  }
  const recipe = recipes[type as TriggeredType];
  const call: Call = async (method, route, body) => (await merchantCall(values, method, route, body)) as Answer;
  const result = await recipe(call);
  const query = `type=${encodeURIComponent(type!)}&objectId=${encodeURIComponent(result.objectId)}&limit=1`;
  const events = (await merchantCall(values, 'GET', `/events?${query}`)) as { data: Array<{ id: string }> };
  const eventId = events.data[0]?.id ?? null;
  if (values.json) {
    process.stdout.write(
      `${JSON.stringify({ type, sentAs: endpointEventType(type), ids: result.ids, event: eventId }, null, 2)}\n`,
    );
    return 0;
  }
  const width = Math.max(...Object.keys(result.ids).map((name) => name.length), 5);
  const lines = Object.entries(result.ids).map(([name, id]) => `  ${name.padEnd(width)}  ${id}`);
  const event = eventId ?? `(${result.later ?? 'not recorded yet'})`;
  // docs/decisions/0014-legacy-opt-in-and-sequence.md: what endpoints receive is the endpoint_ kind; the legacy kind only where it was asked for.
  const sentAs = `${endpointEventType(type)} (and ${type} to endpoints with legacyNotifications on)`;
  process.stdout.write(
    `Triggered ${type}\n${lines.join('\n')}\n  ${'event'.padEnd(width)}  ${event}\n  ${'sent as'.padEnd(width)}  ${sentAs}\n`,
  );
  return 0;
}
