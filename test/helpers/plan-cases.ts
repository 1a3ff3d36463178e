import type { Queryable } from '../../src/db/db.js';
import type { PageRequest } from '../../src/db/pagination.js';
import { selectCustomerPage } from '../../src/customers/queries.js';
import { selectCustomerPaymentMethodPage } from '../../src/payment-methods/queries.js';
import { selectPaymentPage, type PaymentFilters } from '../../src/payments/queries.js';
import { selectRefundPage } from '../../src/refunds/queries.js';
import { selectInvoicePage } from '../../src/invoices/queries.js';
import { selectSessionPage } from '../../src/checkout/queries.js';
import { selectEventPage } from '../../src/events/queries.js';
import { selectWebhookEndpointPage } from '../../src/webhooks/endpoints/queries.js';
import { selectAttempts, selectDeliveryPage, selectEventAttempts } from '../../src/webhooks/deliveries/queries.js';
import { anyDeliveryDue, claimDueDeliveries, claimDueDeliveriesOf } from '../../src/webhooks/engine/queries.js';
import { selectCheckPage } from '../../src/webhooks/check/queries.js';
import { selectRequestLogPage } from '../../src/request-logs/queries.js';
import { selectAudit, selectMembers } from '../../src/team/queries.js';
import { dailySummary } from '../../src/payments/daily-summary.js';
import { manualClock } from '../../src/clock.js';
import { lockFinishedDeliveries, lockOldEvents } from '../../src/retention/queries.js';
import {
  releaseStrandedFollowers,
  selectPendingDeliveries,
  selectUnacknowledgedEvents,
} from '../../src/webhooks/recover/queries.js';

/** One list or filter query of the service, as its query function sends it, over the seeded data. */
export interface ListQuery {
  name: string;
  /** The index that must serve it (a regular expression of names). */
  index: string;
  /** Rows it may read and filter out (default 20): only a filter no index can serve needs more. */
  maxRemoved?: number;
  run(db: Queryable): Promise<unknown>;
}

const big = 'mer_big';
const test = 'test';
/** Cursor pagination: the second page (the cursor lookup and the page after it). */
const after: PageRequest = { limit: 10, startingAfter: 'x_cursor' };
const firstPage: PageRequest = { limit: 10 };
const since = { createdGte: new Date('2026-01-01T10:00:00Z'), createdLt: new Date('2026-01-01T11:00:00Z') };

const payments = (name: string, index: string, filters: PaymentFilters): ListQuery[] => [
  { name: `payments ${name}`, index, run: (db) => selectPaymentPage(db, big, test, filters, firstPage) },
  { name: `payments ${name}, next page`, index, run: (db) => selectPaymentPage(db, big, test, filters, after) },
];

export const listQueries: ListQuery[] = [
  ...payments('list', 'payments_list', {}),
  ...payments('customerId', 'payments_customer', { customerId: 'cus_11' }),
  ...payments('status', 'payments_status_list', { statuses: ['processing'] }),
  // Several statuses (no route sends more than one today) read the list until a page is found.
  ...payments('statuses', 'payments_list', { statuses: ['processing', 'failed'] }).map((query) => ({
    ...query,
    maxRemoved: 100,
  })),
  ...payments('created', 'payments_list', since),
  ...payments('orderNo', 'payments_order_no_lookup', { orderNo: 'order_11' }),
  ...payments('ids', 'payments_pkey', { ids: ['pay_11', 'pay_8'] }),
  ...payments('email', 'customers_email', { email: 'C11@example.com' }),
  // An amount range is a refinement of the dashboard's search: it reads the list until a page of
  // matches is found (here one payment in a hundred matches), whatever the merchant's size.
  ...payments('amount', 'payments_list', { amountGte: 10n, amountLte: 19n }).map((query) => ({
    ...query,
    maxRemoved: 2000,
  })),
  {
    name: 'customers list',
    index: 'customers_list',
    run: (db) => selectCustomerPage(db, big, test, {}, after),
  },
  {
    name: 'customers email',
    index: 'customers_email',
    run: (db) => selectCustomerPage(db, big, test, { email: 'c11@example.com' }, after),
  },
  {
    name: 'customers merchantUserId',
    index: 'customers_merchant_user_list',
    run: (db) => selectCustomerPage(db, big, test, { merchantUserId: 'user_11' }, after),
  },
  {
    name: 'customers created',
    index: 'customers_list',
    run: (db) => selectCustomerPage(db, big, test, since, after),
  },
  {
    name: "a customer's payment methods",
    index: 'payment_methods_customer',
    run: (db) => selectCustomerPaymentMethodPage(db, big, test, 'cus_11', after),
  },
  { name: 'refunds list', index: 'refunds_list', run: (db) => selectRefundPage(db, big, test, {}, after) },
  {
    name: 'refunds paymentId',
    index: 'refunds_payment',
    run: (db) => selectRefundPage(db, big, test, { paymentId: 'pay_11' }, after),
  },
  {
    name: 'refunds status',
    index: 'refunds_status',
    run: (db) => selectRefundPage(db, big, test, { status: 'pending' }, after),
  },
  { name: 'refunds created', index: 'refunds_list', run: (db) => selectRefundPage(db, big, test, since, after) },
  { name: 'invoices list', index: 'invoices_list', run: (db) => selectInvoicePage(db, big, test, {}, after) },
  {
    name: 'invoices customerId',
    index: 'invoices_customer',
    run: (db) => selectInvoicePage(db, big, test, { customerId: 'cus_11' }, after),
  },
  {
    name: 'invoices status',
    index: 'invoices_status',
    run: (db) => selectInvoicePage(db, big, test, { status: 'draft' }, after),
  },
  { name: 'invoices created', index: 'invoices_list', run: (db) => selectInvoicePage(db, big, test, since, after) },
  {
    name: 'checkout sessions list',
    index: 'checkout_sessions_list',
    run: (db) => selectSessionPage(db, big, test, undefined, after),
  },
  {
    name: 'checkout sessions status',
    index: 'checkout_sessions_status',
    run: (db) => selectSessionPage(db, big, test, 'expired', after),
  },
  { name: 'events list', index: 'events_list', run: (db) => selectEventPage(db, big, test, {}, after) },
  {
    name: 'events type',
    index: 'events_type',
    run: (db) => selectEventPage(db, big, test, { type: 'refund.created' }, after),
  },
  {
    name: 'events objectId',
    index: 'events_object',
    run: (db) => selectEventPage(db, big, test, { objectId: 'pay_11' }, after),
  },
  {
    name: 'webhook endpoints list',
    index: 'webhook_endpoints_merchant',
    run: (db) => selectWebhookEndpointPage(db, big, test, after),
  },
  {
    name: 'webhook deliveries list',
    index: 'webhook_deliveries_list',
    run: (db) => selectDeliveryPage(db, big, test, {}, after),
  },
  {
    name: 'webhook deliveries status',
    index: 'webhook_deliveries_status',
    run: (db) => selectDeliveryPage(db, big, test, { status: 'pending' }, after),
  },
  {
    name: 'webhook deliveries endpointId',
    index: 'webhook_deliveries_endpoint',
    run: (db) => selectDeliveryPage(db, big, test, { endpointId: 'we_11' }, after),
  },
  {
    name: "an event's deliveries",
    index: 'webhook_deliveries_event',
    run: (db) => selectDeliveryPage(db, big, test, { eventId: 'evt_11' }, after),
  },
  {
    name: "an event's deliveries by status",
    index: 'webhook_deliveries_event',
    run: (db) => selectDeliveryPage(db, big, test, { eventId: 'evt_11', status: 'pending' }, after),
  },
  {
    name: "an event's deliveries to one endpoint",
    index: 'webhook_deliveries_event',
    run: (db) => selectDeliveryPage(db, big, test, { eventId: 'evt_11', endpointId: 'we_8' }, after),
  },
  {
    name: "a delivery's attempts",
    index: 'webhook_attempts_number',
    run: (db) => selectAttempts(db, 'whd_11'),
  },
  {
    name: "an event's attempts",
    index: 'webhook_deliveries_event',
    run: (db) => selectEventAttempts(db, big, test, 'evt_11', 20),
  },
  {
    name: "an endpoint's checks",
    index: 'webhook_checks_endpoint',
    run: (db) => selectCheckPage(db, { merchantId: big, mode: test, endpointId: 'we_11' }, after),
  },
  {
    name: 'request logs list',
    index: 'api_request_logs_list',
    run: (db) => selectRequestLogPage(db, { merchantId: big, mode: test }, after),
  },
  {
    // A substring of the route pattern: no index serves it; it reads the list (30 days of logs at
    // most) until a page is found. Here every row matches.
    name: 'request logs path',
    index: 'api_request_logs_list',
    run: (db) => selectRequestLogPage(db, { merchantId: big, mode: test, path: 'payments' }, after),
  },
  {
    name: 'request logs status class',
    index: 'api_request_logs_status',
    run: (db) => selectRequestLogPage(db, { merchantId: big, mode: test, statusClass: 4 }, after),
  },
  { name: 'team members', index: 'team_members_merchant', run: (db) => selectMembers(db, 'mer_none') },
  { name: 'audit log', index: 'audit_log_merchant_recent', run: (db) => selectAudit(db, big, 50) },
  {
    name: 'dashboard daily summary',
    index: 'payments_list',
    run: (db) => dailySummary(db, manualClock(new Date('2026-01-02T00:00:00Z')), { merchantId: big, mode: test }, 1),
  },
  // Recover reads each event's deliveries by the event (a planner without statistics chose the
  // endpoint's index and read all of its deliveries for every event: 48 s for 20,000 events).
  ...[null, { created: new Date('2026-01-01T10:30:00Z'), id: 'evt_5000' }].map((cursor): ListQuery => ({
    name: `recover: the events an endpoint has not acknowledged${cursor ? ', next page' : ''}`,
    index: 'webhook_deliveries_event',
    run: (db) =>
      selectUnacknowledgedEvents(db, {
        merchantId: big,
        mode: test,
        endpointId: 'we_1',
        dynamic: false,
        subscribedTo: ['*'],
        since: new Date('2026-01-01T00:00:00Z'),
        until: new Date('2026-01-02T00:00:00Z'),
        after: cursor,
        limit: 500,
      }),
  })),
  {
    name: "recover: the still-retrying deliveries of a page's events",
    index: 'webhook_deliveries_event',
    run: (db) =>
      selectPendingDeliveries(
        db,
        'we_1',
        Array.from({ length: 500 }, (_, index) => `evt_${index + 1}`),
        new Date('2026-01-02T00:00:00Z'),
      ),
  },
];

const now = new Date('2026-01-02T00:00:00Z');
/** Either partial index of pending deliveries (by due time, or by target and due time). */
const pendingIndexes = 'webhook_deliveries_(target_|endpoint_)?due';

/**
 * The delivery engine's searches for due deliveries, explained without running them (they claim):
 * they must keep to their partial indexes of pending rows, whatever the list indexes beside them.
 * And the retention job's searches for its next batch, oldest first (they lock).
 */
export const dueQueries: ListQuery[] = [
  { name: 'any delivery due', index: pendingIndexes, run: (db) => anyDeliveryDue(db, now) },
  {
    name: 'claim due deliveries',
    index: pendingIndexes,
    run: (db) =>
      claimDueDeliveries(db, {
        now,
        leaseUntil: now,
        limit: 50,
        perTargetLimit: 8,
        busyTargets: ['https://example.com/'],
        busyCounts: [1],
        saturatedTargets: [],
        claimedBy: 'proc_plan',
      }),
  },
  {
    name: "claim a target's due deliveries",
    index: 'webhook_deliveries_target_due',
    run: (db) =>
      claimDueDeliveriesOf(db, {
        now,
        leaseUntil: now,
        targets: ['https://example.com/'],
        rooms: [4],
        claimedBy: 'proc_plan',
      }),
  },
  {
    name: 'retention: the oldest finished deliveries',
    index: 'webhook_deliveries_finished',
    run: (db) => lockFinishedDeliveries(db, now, 500),
  },
  { name: 'retention: the oldest events', index: 'events_created', run: (db) => lockOldEvents(db, now, 500) },
  {
    name: "recover: chained deliveries whose predecessor won't be answered",
    index: 'webhook_deliveries_follows',
    run: (db) => releaseStrandedFollowers(db, now, now),
  },
];
