import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { assertScriptsUnderNonce } from './helpers/page-safety.js';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { allowedTransitions, operations } from '../src/invoices/states.js';
import { formatInvoiceNumber, numberPrefixOf } from '../src/invoices/line-items.js';
import {
  databaseKind,
  injectRaw,
  migratedDataDir,
  startTestApp,
  type TestContext,
  type TestMerchant,
} from './helpers/harness.js';
import { mailHeader, mailText, startSmtpServer, type SmtpTestServer } from './helpers/smtp.js';

const dayMs = 24 * 60 * 60 * 1000;

describe('invoice states and numbers', () => {
  test('every operation moves only along the transition table; paid and void are final', () => {
    for (const operation of Object.values(operations)) {
      for (const from of operation.from) {
        for (const to of operation.to) assert.ok(allowedTransitions[from].includes(to), `${from} → ${to}`);
      }
    }
    assert.deepEqual(allowedTransitions.paid, []);
    assert.deepEqual(allowedTransitions.void, []);
    assert.deepEqual(operations.delete.from, ['draft']);
  });

  test('the number prefix comes from the first word of the merchant name', () => {
    assert.equal(numberPrefixOf('Acme Ltd'), 'ACME');
    assert.equal(numberPrefixOf('  Café-Olé & Co'), 'CAFEOLE');
    assert.equal(numberPrefixOf('Supercalifragilistic'), 'SUPERCAL');
    assert.equal(numberPrefixOf('★★★'), 'INV');
    assert.equal(formatInvoiceNumber('ACME', '7'), 'ACME-0007');
    assert.equal(formatInvoiceNumber('ACME', '12345'), 'ACME-12345');
  });
});

describe(`invoices (${databaseKind})`, () => {
  let ctx: TestContext;
  let smtp: SmtpTestServer;
  let acme: TestMerchant;

  before(async () => {
    smtp = await startSmtpServer();
    ctx = await startTestApp({
      env: { TESSERA_SMTP_URL: smtp.url, TESSERA_MAIL_FROM: 'Acme Billing <billing@acme.test>' },
    });
    // The hosted page's address is the one the app answers on; inject() needs no listener.
    acme = await ctx.merchant({ name: 'Acme Ltd' });
  });
  after(async () => {
    await ctx.close();
    await smtp.close();
  });

  async function customer(merchant: TestMerchant, email: string | null = 'ada@example.com'): Promise<string> {
    const response = await merchant.call('POST', '/customers/create', {
      firstName: 'Ada',
      ...(email === null ? {} : { email }),
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data.id;
  }

  const lines = [
    { description: 'Consulting, hours', amount: '12500', quantity: 3 },
    { description: 'Travel', amount: 4999, quantity: '1' },
    { description: 'Stickers', amount: 1 },
  ];

  async function draft(merchant: TestMerchant, changes: Record<string, unknown> = {}) {
    ctx.clock.advance(1);
    const response = await merchant.call('POST', '/invoices/create', {
      customerId: await customer(merchant),
      currency: 'usd',
      lineItems: lines,
      collectionMethod: 'send_invoice',
      daysUntilDue: 14,
      ...changes,
    });
    assert.equal(response.status, 200, response.raw);
    return response.body.data;
  }

  /** Each change a millisecond after the one before, so that its events list in the order they happened. */
  async function act(merchant: TestMerchant, id: string, action: string) {
    ctx.clock.advance(1);
    return merchant.call('POST', `/invoices/${id}/${action}`);
  }

  async function update(merchant: TestMerchant, id: string, body: Record<string, unknown>) {
    ctx.clock.advance(1);
    return merchant.call('POST', `/invoices/${id}/update`, body);
  }

  async function eventsOf(merchant: TestMerchant, objectId: string): Promise<Array<{ type: string; data: any }>> {
    const response = await merchant.call('GET', `/events?objectId=${objectId}&limit=100`);
    return response.body.data.data.reverse();
  }

  test('a draft takes its amounts from the line items: quantity × amount in minor units, as digit strings', async () => {
    const invoice = await draft(acme, { description: 'November work', metadata: { order: 'A-17' } });
    assert.match(invoice.id, /^in_\d{19}$/);
    assert.equal(invoice.status, 'draft');
    assert.equal(invoice.currency, 'USD');
    assert.deepEqual(invoice.lineItems, [
      { description: 'Consulting, hours', amount: '12500', quantity: 3 },
      { description: 'Travel', amount: '4999', quantity: 1 },
      { description: 'Stickers', amount: '1', quantity: 1 },
    ]);
    assert.equal(invoice.amountDue, '42500');
    assert.equal(invoice.amountPaid, '0');
    assert.equal(invoice.amountRemaining, '42500');
    assert.equal(invoice.number, null);
    assert.equal(invoice.hostedInvoiceUrl, null);
    assert.equal(invoice.dueDate, null);
    assert.equal(invoice.daysUntilDue, 14);
    assert.deepEqual(invoice.metadata, { order: 'A-17' });
    assert.equal(invoice.created, ctx.clock.now().toISOString(), 'created at the injected clock');
    assert.deepEqual((await acme.call('GET', `/invoices/${invoice.id}`)).body.data, invoice);

    const events = await eventsOf(acme, invoice.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['invoice.created'],
    );
    assert.deepEqual(events[0]!.data, invoice);
  });

  test('amounts are summed as bigints: the largest line items stay exact', async () => {
    const invoice = await draft(acme, {
      lineItems: [
        { description: 'Big', amount: '99999999999', quantity: 9 },
        { description: 'Odd', amount: '7', quantity: '999999' },
      ],
    });
    assert.equal(invoice.amountDue, '900006999984');
  });

  test('refuses bad input with 400 invalid_request naming the field', async () => {
    const customerId = await customer(acme);
    const valid = {
      customerId,
      currency: 'USD',
      lineItems: [{ description: 'x', amount: '100' }],
      collectionMethod: 'send_invoice',
    };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['customerId missing', { customerId: undefined }, 'customerId'],
      ['unknown currency', { currency: 'XYZ' }, 'currency'],
      ['malformed currency', { currency: 'US' }, 'currency'],
      ['no line items', { lineItems: [] }, 'lineItems'],
      ['a decimal amount', { lineItems: [{ description: 'x', amount: '19.99' }] }, 'lineItems[0].amount'],
      ['a fractional number amount', { lineItems: [{ description: 'x', amount: 19.99 }] }, 'lineItems[0].amount'],
      ['a negative amount', { lineItems: [{ description: 'x', amount: -1 }] }, 'lineItems[0].amount'],
      ['13 digits', { lineItems: [{ description: 'x', amount: '1000000000000' }] }, 'lineItems[0].amount'],
      ['quantity 0', { lineItems: [{ description: 'x', amount: '1', quantity: 0 }] }, 'lineItems[0].quantity'],
      ['quantity 1.5', { lineItems: [{ description: 'x', amount: '1', quantity: '1.5' }] }, 'lineItems[0].quantity'],
      ['no description', { lineItems: [{ amount: '1' }] }, 'lineItems[0].description'],
      ['an unknown line field', { lineItems: [{ description: 'x', amount: '1', price: 2 }] }, 'lineItems[0].price'],
      ['a total of 0', { lineItems: [{ description: 'x', amount: '0' }] }, 'lineItems'],
      [
        'a total beyond 12 digits',
        { lineItems: [{ description: 'x', amount: '999999999999', quantity: 2 }] },
        'lineItems',
      ],
      ['an unknown collection method', { collectionMethod: 'cash' }, 'collectionMethod'],
      [
        'daysUntilDue with charge_automatically',
        { collectionMethod: 'charge_automatically', daysUntilDue: 3 },
        'daysUntilDue',
      ],
      [
        'dueDate with charge_automatically',
        { collectionMethod: 'charge_automatically', dueDate: '2026-12-30T00:00:00.000Z' },
        'dueDate',
      ],
      ['daysUntilDue and dueDate', { daysUntilDue: 3, dueDate: '2026-12-30T00:00:00.000Z' }, 'dueDate'],
      ['a past dueDate', { dueDate: '2026-11-01T00:00:00.000Z' }, 'dueDate'],
      ['a malformed dueDate', { dueDate: 'next week' }, 'dueDate'],
      ['daysUntilDue 400', { daysUntilDue: 400 }, 'daysUntilDue'],
      ['a metadata key of 41 characters', { metadata: { ['k'.repeat(41)]: 'v' } }, 'metadata'],
      ['a metadata value that is not text', { metadata: { a: 1 } }, 'metadata.a'],
      ['an unknown field', { dueDays: 3 }, 'dueDays'],
    ];
    for (const [what, change, param] of cases) {
      const response = await acme.call('POST', '/invoices/create', { ...valid, ...change });
      assert.equal(response.status, 400, `${what}: ${response.raw}`);
      assert.equal(response.body.code, 'invalid_request', what);
      assert.equal(response.body.data?.param, param, `${what}: ${response.raw}`);
      assert.ok(response.body.msg.length > 10, what);
    }
    const unknownCustomer = await acme.call('POST', '/invoices/create', {
      ...valid,
      customerId: 'cus_1234567890123456789',
    });
    assert.equal(unknownCustomer.status, 404);
    assert.equal(unknownCustomer.body.data.param, 'customerId');
    const unknownMethod = await acme.call('POST', '/invoices/create', {
      ...valid,
      paymentMethod: 'pm_1234567890123456789',
    });
    assert.equal(unknownMethod.status, 404);
    assert.equal(unknownMethod.body.data.param, 'paymentMethod');
    const list = await acme.call('GET', `/invoices?customerId=${customerId}`);
    assert.deepEqual(list.body.data.data, [], 'nothing was half-written');
  });

  test('a payment method must be a card of the invoice customer', async () => {
    const method = await acme.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { cardNo: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    const unbound = await acme.call('POST', '/invoices/create', {
      customerId: await customer(acme),
      currency: 'USD',
      lineItems: [{ description: 'x', amount: '100' }],
      collectionMethod: 'charge_automatically',
      paymentMethod: method.body.data.id,
    });
    assert.equal(unbound.status, 400);
    assert.equal(unbound.body.code, 'payment_method_not_bound');
    assert.equal(unbound.body.data.param, 'paymentMethod');
  });

  test('finalize: draft → open with a number unique per merchant, also when many finalize at once', async () => {
    const numbered = await ctx.merchant({ name: 'Numbered Goods' });
    const drafts = await Promise.all(Array.from({ length: 6 }, () => draft(numbered)));
    const finalized = await Promise.all(drafts.map((invoice) => act(numbered, invoice.id, 'finalize')));
    for (const response of finalized) assert.equal(response.status, 200, response.raw);
    const numbers = finalized.map((response) => response.body.data.number).sort();
    assert.deepEqual(numbers, [
      'NUMBERED-0001',
      'NUMBERED-0002',
      'NUMBERED-0003',
      'NUMBERED-0004',
      'NUMBERED-0005',
      'NUMBERED-0006',
    ]);

    const other = await ctx.merchant({ name: 'Numbered Goods' });
    const first = await act(other, (await draft(other)).id, 'finalize');
    assert.equal(first.body.data.number, 'NUMBERED-0001', "another merchant's numbers are its own");
  });

  test('finalize freezes the totals, sets the due date and the hosted page, and emits Invoice.updated', async () => {
    const invoice = await draft(acme);
    ctx.clock.advance(60_000);
    const response = await act(acme, invoice.id, 'finalize');
    assert.equal(response.status, 200, response.raw);
    const open = response.body.data;
    assert.equal(open.status, 'open');
    assert.match(open.number, /^ACME-\d{4}$/);
    assert.equal(open.finalizedAt, ctx.clock.now().toISOString());
    assert.equal(open.dueDate, new Date(Date.parse(open.finalizedAt) + 14 * dayMs).toISOString());
    assert.equal(open.amountRemaining, '42500');
    assert.match(open.hostedInvoiceUrl, new RegExp(`/invoice/${open.id}\\?token=[0-9a-f]{64}$`));
    const events = await eventsOf(acme, invoice.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['invoice.created', 'Invoice.updated'],
    );
    assert.equal(events[1]!.data.status, 'open');
    assert.equal(events[1]!.data.number, open.number);

    const again = await act(acme, invoice.id, 'finalize');
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'invalid_state');
    assert.equal(again.body.data.status, 'open');

    const defaulted = await draft(acme, { daysUntilDue: undefined });
    const thirty = (await act(acme, defaulted.id, 'finalize')).body.data;
    assert.equal(thirty.daysUntilDue, 30);
    assert.equal(thirty.dueDate, new Date(Date.parse(thirty.finalizedAt) + 30 * dayMs).toISOString());
  });

  test('update: a draft takes every field; an open invoice only description, metadata and due date', async () => {
    const invoice = await draft(acme);
    const otherCustomer = await customer(acme, 'grace@example.com');
    const edited = await update(acme, invoice.id, {
      customerId: otherCustomer,
      currency: 'JPY',
      lineItems: [{ description: 'Tea', amount: '500', quantity: 4 }],
      dueDate: '2027-01-15T00:00:00.000Z',
      description: 'Edited',
    });
    assert.equal(edited.status, 200, edited.raw);
    assert.equal(edited.body.data.customerId, otherCustomer);
    assert.equal(edited.body.data.currency, 'JPY');
    assert.equal(edited.body.data.amountDue, '2000');
    assert.equal(edited.body.data.dueDate, '2027-01-15T00:00:00.000Z');
    assert.equal(edited.body.data.daysUntilDue, null);

    const open = (await act(acme, invoice.id, 'finalize')).body.data;
    assert.equal(open.dueDate, '2027-01-15T00:00:00.000Z', 'an explicit due date is kept');
    for (const [field, value] of [
      ['lineItems', [{ description: 'More', amount: '1' }]],
      ['currency', 'EUR'],
      ['customerId', otherCustomer],
      ['collectionMethod', 'charge_automatically'],
    ] as const) {
      const refused = await update(acme, invoice.id, { [field]: value });
      assert.equal(refused.status, 400, field);
      assert.equal(refused.body.code, 'invalid_state', field);
      assert.equal(refused.body.data.param, field);
    }
    const allowed = await update(acme, invoice.id, {
      description: 'Now open',
      metadata: { po: '991' },
      daysUntilDue: 7,
    });
    assert.equal(allowed.status, 200, allowed.raw);
    assert.equal(allowed.body.data.description, 'Now open');
    assert.deepEqual(allowed.body.data.metadata, { po: '991' });
    assert.equal(allowed.body.data.dueDate, new Date(Date.parse(open.finalizedAt) + 7 * dayMs).toISOString());
    assert.equal(allowed.body.data.amountDue, '2000', 'totals stay frozen');

    await act(acme, invoice.id, 'void');
    const afterVoid = await update(acme, invoice.id, { description: 'Too late' });
    assert.equal(afterVoid.status, 400);
    assert.equal(afterVoid.body.code, 'invalid_state');
    assert.equal(afterVoid.body.data.status, 'void');
    const types = (await eventsOf(acme, invoice.id)).map((event) => event.type);
    assert.deepEqual(types, [
      'invoice.created',
      'Invoice.updated',
      'Invoice.updated',
      'Invoice.updated',
      'Invoice.voided',
    ]);
  });

  test('void: open or uncollectible → void with Invoice.voided; a draft or a void invoice is invalid_state', async () => {
    const invoice = await draft(acme);
    const onDraft = await act(acme, invoice.id, 'void');
    assert.equal(onDraft.status, 400);
    assert.equal(onDraft.body.code, 'invalid_state');
    await act(acme, invoice.id, 'finalize');
    ctx.clock.advance(1000);
    const voided = await act(acme, invoice.id, 'void');
    assert.equal(voided.status, 200, voided.raw);
    assert.equal(voided.body.data.status, 'void');
    assert.ok(voided.body.data.voidedAt);
    const twice = await act(acme, invoice.id, 'void');
    assert.equal(twice.body.code, 'invalid_state');
    const events = await eventsOf(acme, invoice.id);
    assert.equal(events.at(-1)!.type, 'Invoice.voided');
    assert.deepEqual(events.at(-1)!.data, voided.body.data);
  });

  test('mark_uncollectible: open → uncollectible (Invoice.updated), which can still be voided', async () => {
    const invoice = await draft(acme);
    assert.equal((await act(acme, invoice.id, 'mark_uncollectible')).body.code, 'invalid_state');
    await act(acme, invoice.id, 'finalize');
    const marked = await act(acme, invoice.id, 'mark_uncollectible');
    assert.equal(marked.status, 200, marked.raw);
    assert.equal(marked.body.data.status, 'uncollectible');
    assert.ok(marked.body.data.markedUncollectibleAt);
    assert.equal((await act(acme, invoice.id, 'mark_uncollectible')).body.code, 'invalid_state');
    assert.equal((await act(acme, invoice.id, 'void')).body.data.status, 'void');
    const types = (await eventsOf(acme, invoice.id)).map((event) => event.type);
    assert.deepEqual(types, ['invoice.created', 'Invoice.updated', 'Invoice.updated', 'Invoice.voided']);
  });

  test('delete: only a draft, with invoice.deleted; then it is gone', async () => {
    const invoice = await draft(acme);
    ctx.clock.advance(1);
    const deleted = await acme.call('DELETE', `/invoices/${invoice.id}`);
    assert.equal(deleted.status, 200, deleted.raw);
    assert.deepEqual(deleted.body.data, { id: invoice.id, deleted: true });
    assert.equal((await acme.call('GET', `/invoices/${invoice.id}`)).status, 404);
    assert.equal((await acme.call('DELETE', `/invoices/${invoice.id}`)).status, 404);
    const events = await eventsOf(acme, invoice.id);
    assert.deepEqual(
      events.map((event) => event.type),
      ['invoice.created', 'invoice.deleted'],
    );
    assert.equal(events[1]!.data.id, invoice.id);

    const open = await draft(acme);
    await act(acme, open.id, 'finalize');
    const refused = await acme.call('DELETE', `/invoices/${open.id}`);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'invalid_state');
    assert.equal(refused.body.data.status, 'open');
  });

  test('a draft finalized and deleted at once is either numbered or deleted, never both', async () => {
    for (let round = 0; round < 5; round++) {
      const invoice = await draft(acme);
      const [finalized, deleted] = await Promise.all([
        act(acme, invoice.id, 'finalize'),
        acme.call('DELETE', `/invoices/${invoice.id}`),
      ]);
      assert.equal([finalized.status, deleted.status].filter((status) => status === 200).length, 1);
      const types = (await eventsOf(acme, invoice.id)).map((event) => event.type);
      assert.equal(types.length, 2, types.join());
    }
  });

  test('lists newest first, filtered by customer, status and created, with cursors', async () => {
    const lister = await ctx.merchant({ name: 'Lister' });
    const customerId = await customer(lister);
    const made: string[] = [];
    for (let index = 0; index < 5; index++) {
      ctx.clock.advance(1000);
      made.push((await draft(lister, { customerId })).id);
    }
    await act(lister, made[1]!, 'finalize');
    await draft(lister);

    const byCustomer = await lister.call('GET', `/invoices?customerId=${customerId}&limit=3`);
    assert.deepEqual(
      byCustomer.body.data.data.map((invoice: { id: string }) => invoice.id),
      [made[4], made[3], made[2]],
    );
    assert.equal(byCustomer.body.data.hasMore, true);
    const next = await lister.call('GET', `/invoices?customerId=${customerId}&limit=3&startingAfter=${made[2]}`);
    assert.deepEqual(
      next.body.data.data.map((invoice: { id: string }) => invoice.id),
      [made[1], made[0]],
    );
    const open = await lister.call('GET', '/invoices?status=open');
    assert.deepEqual(
      open.body.data.data.map((invoice: { id: string }) => invoice.id),
      [made[1]],
    );
    const created = (await lister.call('GET', `/invoices/${made[2]}`)).body.data.created;
    const since = await lister.call('GET', `/invoices?customerId=${customerId}&created[gte]=${created}`);
    assert.equal(since.body.data.data.length, 3);
    const badStatus = await lister.call('GET', '/invoices?status=late');
    assert.equal(badStatus.status, 400);
    assert.equal(badStatus.body.data.param, 'status');
  });

  test("another merchant's invoices are not found", async () => {
    const invoice = await draft(acme);
    const stranger = await ctx.merchant();
    for (const [method, path] of [
      ['GET', `/invoices/${invoice.id}`],
      ['POST', `/invoices/${invoice.id}/finalize`],
      ['POST', `/invoices/${invoice.id}/update`],
      ['DELETE', `/invoices/${invoice.id}`],
    ] as const) {
      const response = await stranger.call(method, path, method === 'POST' ? {} : undefined);
      assert.equal(response.status, 404, `${method} ${path}`);
    }
    assert.deepEqual((await stranger.call('GET', '/invoices')).body.data.data, []);
  });

  test('send e-mails the customer a link to the hosted page through a real SMTP server (Invoice.sent)', async () => {
    const invoice = await draft(acme, { description: 'Thank you for <your> business' });
    const open = (await act(acme, invoice.id, 'finalize')).body.data;
    const before = smtp.messages.length;
    const sent = await act(acme, invoice.id, 'send');
    assert.equal(sent.status, 200, sent.raw);
    const [mail] = (await smtp.waitFor(before + 1)).slice(before);
    assert.ok(mail);
    assert.equal(mail.from, 'billing@acme.test');
    assert.deepEqual(mail.to, ['ada@example.com']);
    assert.equal(mailHeader(mail.raw, 'From'), 'Acme Billing <billing@acme.test>');
    assert.equal(mailHeader(mail.raw, 'Subject'), `Invoice ${open.number} from Acme Ltd`);
    const text = mailText(mail.raw);
    assert.ok(text.includes(open.hostedInvoiceUrl), text);
    assert.ok(text.includes('425.00 USD'), text);
    assert.ok(text.includes('6 December 2026'), text);

    const types = (await eventsOf(acme, invoice.id)).map((event) => event.type);
    assert.deepEqual(types, ['invoice.created', 'Invoice.updated', 'Invoice.sent']);

    // The link works: the page shows who bills, the lines, the total, the due date and the status.
    const url = new URL(open.hostedInvoiceUrl);
    const page = await injectRaw(ctx, { method: 'GET', url: `${url.pathname}${url.search}` });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-security-policy']), /default-src 'none'/);
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    for (const shown of [
      'Acme Ltd',
      open.number,
      'Consulting, hours',
      '$125.00',
      '$375.00',
      '$425.00',
      'December 6, 2026',
      'Thank you for &lt;your&gt; business',
    ]) {
      assert.ok(page.body.includes(shown), `page shows ${shown}`);
    }
    // Only Tessera's own card scripts, as files under the page's nonce (the CSP allows no other).
    assert.deepEqual(assertScriptsUnderNonce(page.headers, page.body), [
      '/js/v1/card-input.js',
      '/js/v1/hosted-form.js',
    ]);
    assert.match(page.body, new RegExp(`<form method="post" action="/invoice/${open.id}/pay"`));
    assert.match(page.body, /name="cardNo"/);
  });

  test('send is refused for a draft, a charge_automatically invoice and a customer without e-mail', async () => {
    const invoice = await draft(acme);
    assert.equal((await act(acme, invoice.id, 'send')).body.code, 'invalid_state');
    const automatic = await draft(acme, { collectionMethod: 'charge_automatically', daysUntilDue: undefined });
    await act(acme, automatic.id, 'finalize');
    const refused = await act(acme, automatic.id, 'send');
    assert.equal(refused.status, 400);
    assert.equal(refused.body.code, 'invalid_state');
    const silent = await draft(acme, { customerId: await customer(acme, null) });
    await act(acme, silent.id, 'finalize');
    const noEmail = await act(acme, silent.id, 'send');
    assert.equal(noEmail.status, 400);
    assert.equal(noEmail.body.data.param, 'customerId');
  });

  test('a mail server that refuses the message fails the send, and no Invoice.sent is recorded', async () => {
    const invoice = await draft(acme);
    await act(acme, invoice.id, 'finalize');
    smtp.refuse(true);
    try {
      const response = await act(acme, invoice.id, 'send');
      assert.equal(response.status, 500);
      assert.equal(response.body.code, 'internal_error');
      assert.match(response.body.msg, /e-mail could not be sent/);
    } finally {
      smtp.refuse(false);
    }
    const types = (await eventsOf(acme, invoice.id)).map((event) => event.type);
    assert.deepEqual(types, ['invoice.created', 'Invoice.updated']);
  });

  test('the hosted page answers 404 for a wrong or missing token and an unknown invoice', async () => {
    const invoice = await draft(acme);
    const open = (await act(acme, invoice.id, 'finalize')).body.data;
    const url = new URL(open.hostedInvoiceUrl);
    const token = url.searchParams.get('token')!;
    const wrong = token.replace(/^./, (char) => (char === '0' ? '1' : '0'));
    for (const path of [
      `/invoice/${open.id}?token=${wrong}`,
      `/invoice/${open.id}`,
      `/invoice/in_1234567890123456789?token=${token}`,
    ]) {
      const page = await injectRaw(ctx, { method: 'GET', url: path });
      assert.equal(page.statusCode, 404, path);
      assert.ok(!page.body.includes('Acme'), path);
    }
  });
});

describe(`invoice e-mail without an SMTP server (${databaseKind})`, () => {
  let ctx: TestContext;
  let dataDir: string;
  before(async () => {
    dataDir = await migratedDataDir('tessera-invoice-mail-');
    ctx = await startTestApp({ env: { TESSERA_DATA_DIR: dataDir } });
  });
  after(async () => {
    await ctx.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('send writes the message as an .eml file into <data folder>/mail, with the hosted link', async () => {
    const merchant = await ctx.merchant({ name: 'Offline Co' });
    const customer = await merchant.call('POST', '/customers/create', { email: 'lin@example.com' });
    const created = await merchant.call('POST', '/invoices/create', {
      customerId: customer.body.data.id,
      currency: 'EUR',
      lineItems: [{ description: 'Repair', amount: '8000' }],
      collectionMethod: 'send_invoice',
    });
    const open = (await merchant.call('POST', `/invoices/${created.body.data.id}/finalize`)).body.data;
    const sent = await merchant.call('POST', `/invoices/${open.id}/send`);
    assert.equal(sent.status, 200, sent.raw);
    const files = readdirSync(path.join(dataDir, 'mail')).filter((name) => name.endsWith('.eml'));
    assert.equal(files.length, 1);
    const raw = readFileSync(path.join(dataDir, 'mail', files[0]!), 'utf8');
    assert.equal(mailHeader(raw, 'To'), 'lin@example.com');
    assert.equal(mailHeader(raw, 'From'), 'Tessera <no-reply@localhost>');
    assert.equal(mailHeader(raw, 'Subject'), 'Invoice OFFLINE-0001 from Offline Co');
    assert.ok(mailText(raw).includes(open.hostedInvoiceUrl));
    assert.equal(ctx.tessera.mail.kept().length, 1);
  });
});
