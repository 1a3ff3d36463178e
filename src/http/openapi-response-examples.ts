/**
 * Whole answers, written by hand, for the operations of a first integration (issue 12): what
 * /docs shows under "Example Value" of each 200 response instead of a skeleton made from the
 * schema. They answer the request examples of openapi-docs.ts (same ids, amounts and fields), and
 * test/api-reference.test.ts checks that each one validates against its response schema.
 */

const id = (prefix: string) => `${prefix}_7301542996317045834`;
const created = '2025-03-01T12:00:00.000Z';
const success = (data: unknown) => ({ code: 'success', msg: 'success', data });

const customer = {
  id: id('cus'),
  address: null,
  description: null,
  email: 'ada@example.com',
  firstName: 'Ada',
  lastName: 'Lovelace',
  phone: null,
  shipping: null,
  merchantUserId: 'user-42',
  created,
};

// Only the brand, the last four digits and a fingerprint come back: never the number or the code.
const paymentMethod = {
  id: id('pm'),
  type: 'card',
  billingDetails: { address: null, email: null, firstName: null, lastName: null, phone: null, description: null },
  created,
  customerId: null,
  card: {
    brand: 'visa',
    country: 'US',
    expMonth: '12',
    expYear: '2030',
    fingerprint: 'Xq3vJ8kP2sLmN5tR7wYz-1aB4cD6eF9g',
    last4: '4242',
    tokenType: null,
  },
  merchantPaySite: null,
  boleto: null,
  pix: null,
  creditCardBrazil: null,
};

const payment = {
  id: id('pt'),
  amount: '1999',
  currency: 'USD',
  confirmationMethod: 'automatic',
  customerId: id('cus'),
  paymentMethod: id('pm'),
  description: null,
  ip: null,
  confirm: 'true',
  lineItems: null,
  notifyUrl: 'https://shop.example.com/webhooks/tessera',
  orderNo: 'order-1001',
  preAuth: 'n',
  receiptEmail: null,
  returnUrl: null,
  setupFutureUsage: 'on',
  subsequentInitialType: null,
  statementDescriptor: null,
  statementDescriptorSuffix: null,
  website: null,
  userAgent: null,
  shipping: null,
  appScheme: null,
  openUserId: null,
  fromChannel: null,
  automaticPaymentMethods: null,
  recurring: null,
  paymentMethodTypes: ['card'],
  paymentMethodType: 'card',
  paymentMethodDetails: {
    type: 'card',
    card: {
      brand: 'visa',
      last4: '4242',
      expMonth: '12',
      expYear: '2030',
      country: 'US',
      fingerprint: 'Xq3vJ8kP2sLmN5tR7wYz-1aB4cD6eF9g',
    },
  },
  clientSecret: `${id('pt')}_secret_5c1e0f7a9b3d2e4f6a8c0b1d3e5f7a9c2b4d6e8f0a1c3e5d7f9b2a4c6e8d0f1b`,
  canceledAt: null,
  cancellationReason: null,
  amountReceived: '1999',
  amountCapturable: '0',
  amountRefunded: '0',
  created,
  riskInfo: { riskScore: 10, riskMessage: 'risk_pass' },
  status: 'succeeded',
  displayStatus: 'succeeded',
  errorCode: null,
  errorMessage: null,
  invoiceId: null,
  use3D: false,
};

// A refund is pending until the processor settles it; refund.succeeded (or failed) follows.
const refund = {
  id: id('re'),
  amount: '500',
  currency: 'USD',
  paymentId: id('pt'),
  reason: 'requested_by_customer',
  note: null,
  description: null,
  metadata: null,
  status: 'pending',
  failureReason: null,
  created,
};

// A new invoice is a draft: no number, due date or hosted page until it is finalized.
const invoice = {
  id: id('in'),
  customerId: id('cus'),
  currency: 'USD',
  lineItems: [{ description: 'Consulting, March', amount: '150000', quantity: 2 }],
  number: null,
  amountDue: '300000',
  amountPaid: '0',
  amountRemaining: '300000',
  collectionMethod: 'send_invoice',
  daysUntilDue: 30,
  dueDate: null,
  paymentMethod: null,
  description: null,
  metadata: null,
  status: 'draft',
  hostedInvoiceUrl: null,
  paymentId: null,
  attemptCount: 0,
  nextPaymentAttempt: null,
  lastPaymentError: null,
  finalizedAt: null,
  paidAt: null,
  voidedAt: null,
  markedUncollectibleAt: null,
  created,
};

// The token is answered in full only here (and by reveal_token): the receiver verifies with it.
const webhookEndpoint = {
  id: id('we'),
  kind: 'static',
  url: 'https://shop.example.com/webhooks/tessera',
  description: 'Order updates',
  enabledEvents: ['payment.succeeded', 'payment.failed', 'refund.succeeded'],
  legacyNotifications: false,
  signatureCase: 'upper',
  format: 'moneycollect',
  status: 'enabled',
  health: 'healthy',
  failingSince: null,
  lastError: null,
  disabledReason: null,
  nextAttemptAt: null,
  created,
  token: 'whsec_9fQ2rT7vXk1LmN3pB8sD4gH6jW0yZ5cA2eR7tU1iO3pK9sL4',
};

/** `METHOD path` (without the /api/services/v1 prefix) → the whole 200 answer. */
export const responseExamples: Record<string, unknown> = {
  'POST /customers/create': success(customer),
  'POST /payment_methods/create': success(paymentMethod),
  'POST /payment/create': success(payment),
  'POST /refunds/create': success(refund),
  'POST /invoices/create': success(invoice),
  'POST /webhook_endpoints/create': success(webhookEndpoint),
};
