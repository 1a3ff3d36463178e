import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import {
  AttachPaymentMethodBody,
  CreatePaymentMethodBody,
  CustomerPaymentMethodsParams,
  DetachPaymentMethodBody,
  ListPaymentMethodsQuery,
  PaymentMethod,
  PaymentMethodParams,
  UpdatePaymentMethodBody,
  bareBillingDetails,
  repeatedCustomerId,
  repeatedPaymentMethodId,
} from './schemas.js';
import type { PaymentMethodService } from './service.js';

const tags = ['Payment methods'];

export function paymentMethodRoutes(paymentMethods: PaymentMethodService) {
  return (app: App) => {
    app.post(
      '/payment_methods/create',
      {
        // The one route a public key may call: card data goes from the customer's browser
        // straight to Tessera, never through the merchant's server.
        config: { publicKeyAllowed: true },
        schema: {
          tags,
          description:
            'Creates a card payment method. May be called with a public key (test_pu_…), from a browser (CORS).',
          body: CreatePaymentMethodBody,
          response: { 200: envelope(PaymentMethod) },
        },
      },
      async (request) => ok(await paymentMethods.create(merchantOf(request), request.body)),
    );
    app.get(
      '/payment_methods/:id',
      {
        // docs/api.md#requests: a customer's page reads back the method it created (never the card number).
        config: { publicKeyAllowed: true },
        schema: {
          tags,
          description: 'May be called with a public key (test_pu_…), from a browser (CORS).',
          params: PaymentMethodParams,
          response: { 200: envelope(PaymentMethod) },
        },
      },
      async (request) => ok(await paymentMethods.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/payment_methods/list/:customerId',
      {
        config: { repeatedPathParam: repeatedCustomerId },
        schema: {
          tags,
          description: "The customer's attached payment methods, newest first.",
          params: CustomerPaymentMethodsParams,
          querystring: ListPaymentMethodsQuery,
          response: { 200: listOf(PaymentMethod) },
        },
      },
      async (request) =>
        ok(await paymentMethods.listOfCustomer(merchantOf(request), request.params.customerId, request.query)),
    );
    app.post(
      '/payment_methods/:id/attach',
      {
        config: { repeatedPathParam: repeatedPaymentMethodId },
        schema: {
          tags,
          params: PaymentMethodParams,
          body: AttachPaymentMethodBody,
          response: { 200: envelope(PaymentMethod) },
        },
      },
      async (request) =>
        ok(await paymentMethods.attach(merchantOf(request), request.params.id, request.body.customerId)),
    );
    app.post(
      '/payment_methods/:id/detach',
      {
        config: { repeatedPathParam: repeatedPaymentMethodId },
        schema: {
          tags,
          params: PaymentMethodParams,
          body: DetachPaymentMethodBody,
          response: { 200: envelope(PaymentMethod) },
        },
      },
      async (request) => ok(await paymentMethods.detach(merchantOf(request), request.params.id)),
    );
    app.post(
      '/payment_methods/:id/update',
      {
        config: { reshapeBody: bareBillingDetails },
        schema: {
          tags,
          description:
            'Billing details, merchantPaySite and the expiry. The billing details may also be sent bare, as the whole body (`{"firstName": …}`), as some clients do.',
          params: PaymentMethodParams,
          body: UpdatePaymentMethodBody,
          response: { 200: envelope(PaymentMethod) },
        },
      },
      async (request) => ok(await paymentMethods.update(merchantOf(request), request.params.id, request.body)),
    );
  };
}
