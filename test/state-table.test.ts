import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { paymentStates } from '../src/payments/states.js';
import { defineStateTable } from '../src/state-table.js';

const invoiceLike = () =>
  defineStateTable({
    name: 'invoices',
    statuses: ['draft', 'open', 'paid', 'void'] as const,
    transitions: { draft: ['open'], open: ['paid', 'void'], paid: [], void: [] },
    operations: {
      edit: { from: ['draft', 'open'], to: [] },
      finalize: { from: ['draft'], to: ['open'] },
      settle: { from: ['open'], to: ['paid', 'void'] },
    },
  });

describe('state table', () => {
  test('a transition carries the operation’s from list and the checked target status', () => {
    const table = invoiceLike();
    assert.deepEqual(table.transition('settle', 'paid'), { operation: 'settle', from: ['open'], to: 'paid' });
    assert.deepEqual(table.transition('edit'), { operation: 'edit', from: ['draft', 'open'], to: undefined });
    assert.deepEqual(table.startsFrom('finalize'), ['draft']);
    assert.equal(table.canStart('finalize', 'draft'), true);
    assert.equal(table.canStart('finalize', 'open'), false);
    assert.equal(table.canMove('open', 'paid'), true);
    assert.equal(table.canMove('paid', 'open'), false);
  });

  test('refuses at run time a target status the operation does not lead to', () => {
    const table = invoiceLike();
    assert.throws(
      () => table.transition('finalize', 'paid'),
      /invoices: finalize may not lead to paid; it leads to open/,
    );
    // A status the table knows but no operation reaches from draft.
    assert.throws(() => table.transition('settle', 'draft'), /settle may not lead to draft/);
    // Keeping the status is only for an operation that leads nowhere else.
    assert.throws(() => table.transition('settle'), /settle may not keep its status/);
    assert.throws(() => table.transition('edit', 'open'), /edit may not lead to open; it leads to no other status/);
    assert.throws(() => (table.transition as (operation: string) => unknown)('publish'), /no operation named publish/);
  });

  test('refuses at load time an operation that leaves the table', () => {
    assert.throws(
      () =>
        defineStateTable({
          name: 'refunds',
          statuses: ['pending', 'succeeded', 'failed'] as const,
          transitions: { pending: ['succeeded', 'failed'], succeeded: [], failed: [] },
          operations: { undo: { from: ['succeeded'], to: ['pending'] } },
        }),
      /refunds state table: undo moves succeeded → pending, which the table forbids/,
    );
  });

  test('refuses at load time a table that is not closed over its statuses', () => {
    const define = (transitions: Record<string, readonly string[]>, operations = {}) =>
      defineStateTable({
        name: 'refunds',
        statuses: ['pending', 'succeeded'] as readonly string[],
        transitions,
        operations,
      });
    assert.throws(() => define({ pending: ['succeeded'] }), /no transitions listed for succeeded/);
    assert.throws(() => define({ pending: ['lost'], succeeded: [] }), /pending → unknown status lost/);
    assert.throws(() => define({ pending: [], succeeded: [], lost: [] }), /unknown status lost/);
    assert.throws(
      () => define({ pending: [], succeeded: [] }, { settle: { from: [], to: ['succeeded'] } }),
      /settle starts from no status/,
    );
    assert.throws(
      () => define({ pending: [], succeeded: [] }, { settle: { from: ['pending'], to: ['lost'] } }),
      /settle names unknown status lost/,
    );
  });

  test('payments: the table refuses a target status its operation does not lead to', () => {
    assert.deepEqual(paymentStates.transition('cancel', 'canceled').from, [
      'requires_payment_method',
      'requires_confirmation',
      'requires_action',
      'requires_capture',
    ]);
    assert.throws(() => paymentStates.transition('cancel', 'succeeded'), /payments: cancel may not lead to succeeded/);
    assert.throws(() => paymentStates.transition('capture', 'succeeded'), /capture may not lead to succeeded/);
    assert.equal(paymentStates.transition('update').to, undefined);
  });
});
