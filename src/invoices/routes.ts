import type { FastifyReply, FastifyRequest } from 'fastify';
import { envelope, listOf, ok } from '../http/envelope.js';
import { markDatabaseUnavailable, unavailableRetryAfterSeconds } from '../http/error-responses.js';
import { statusOfThrown } from '../http/error-status.js';
import { merchantOf, type App } from '../http/server.js';
import { shopperLocale } from '../shopper/locales.js';
import type { ShopperBrand } from '../shopper/page.js';
import type { SafeHtml } from '../web/html.js';
import { invoicePageHeaders, renderInvoiceMessage, renderInvoicePage } from '../shopper/invoice-page.js';
import {
  CreateInvoiceBody,
  DeletedInvoice,
  Invoice,
  InvoiceParams,
  ListInvoicesQuery,
  PayInvoiceBody,
  UpdateInvoiceBody,
} from './schemas.js';
import type { InvoiceService } from './service.js';
import type { RateLimiter } from '../http/rate-limit.js';

const tags = ['Invoices'];

export function invoiceRoutes(invoices: InvoiceService) {
  return (app: App) => {
    app.post(
      '/invoices/create',
      {
        schema: {
          tags,
          description:
            'Creates a draft invoice (event invoice.created). Amounts come from the line items: quantity × amount, in minor units.',
          body: CreateInvoiceBody,
          response: { 200: envelope(Invoice) },
        },
      },
      async (request) => ok(await invoices.create(merchantOf(request), request.body)),
    );
    app.get(
      '/invoices/:id',
      {
        schema: {
          tags,
          description: 'An invoice by its id.',
          params: InvoiceParams,
          response: { 200: envelope(Invoice) },
        },
      },
      async (request) => ok(await invoices.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/invoices',
      {
        schema: {
          tags,
          description: 'Newest first. Filters: customerId, status, created[gt|gte|lt|lte] (ISO 8601).',
          querystring: ListInvoicesQuery,
          response: { 200: listOf(Invoice) },
        },
      },
      async (request) => ok(await invoices.list(merchantOf(request), request.query)),
    );
    app.post(
      '/invoices/:id/update',
      {
        schema: {
          tags,
          description:
            'A draft: any field. An open invoice: description, metadata, daysUntilDue or dueDate only; anything else is invalid_state. Event Invoice.updated.',
          params: InvoiceParams,
          body: UpdateInvoiceBody,
          response: { 200: envelope(Invoice) },
        },
      },
      async (request) => ok(await invoices.update(merchantOf(request), request.params.id, request.body)),
    );
    const action = (
      name: 'finalize' | 'send' | 'void' | 'mark_uncollectible',
      description: string,
      run: (merchant: ReturnType<typeof merchantOf>, id: string) => Promise<Invoice>,
    ) =>
      app.post(
        `/invoices/:id/${name}`,
        { schema: { tags, description, params: InvoiceParams, response: { 200: envelope(Invoice) } } },
        async (request) => ok(await run(merchantOf(request), request.params.id)),
      );
    action(
      'finalize',
      'draft → open: the invoice gets its number, its totals are fixed, hostedInvoiceUrl is set, and a send_invoice invoice its dueDate. Event Invoice.updated.',
      (merchant, id) => invoices.finalize(merchant, id),
    );
    action(
      'send',
      'E-mails the customer a link to the hosted invoice page (open send_invoice invoices). Event Invoice.sent.',
      (merchant, id) => invoices.send(merchant, id),
    );
    action(
      'void',
      'open or uncollectible → void; refused while a payment of the invoice is in progress. Event Invoice.voided.',
      (merchant, id) => invoices.void(merchant, id),
    );
    action(
      'mark_uncollectible',
      'open → uncollectible: automatic retries stop; it can still be paid or voided. Event Invoice.updated.',
      (merchant, id) => invoices.markUncollectible(merchant, id),
    );
    app.post(
      '/invoices/:id/pay',
      {
        schema: {
          tags,
          description:
            'Charges what remains as a MIT on the customer’s bound card (paymentMethod, else the invoice’s, else the latest bound). ' +
            'Success: paid, event invoice.payment_succeeds. A decline or no usable card: the invoice stays unpaid with lastPaymentError, event invoice.payment_failed.',
          params: InvoiceParams,
          body: PayInvoiceBody,
          response: { 200: envelope(Invoice) },
        },
      },
      async (request) => ok(await invoices.pay(merchantOf(request), request.params.id, request.body)),
    );
    app.delete(
      '/invoices/:id',
      {
        schema: {
          tags,
          description: 'Deletes a draft; any other status is invalid_state. Event invoice.deleted.',
          params: InvoiceParams,
          response: { 200: envelope(DeletedInvoice) },
        },
      },
      async (request) => ok(await invoices.delete(merchantOf(request), request.params.id)),
    );
  };
}

/** The customer's browser languages decide the page's (an invoice has no locale of its own). */
const localeOf = (request: FastifyRequest) => shopperLocale(null, request.headers['accept-language']);

function sendPage(reply: FastifyReply, status: number, page: SafeHtml, brand: ShopperBrand | null = null) {
  return reply.code(status).headers(invoicePageHeaders(page, brand)).send(page.text);
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * The hosted invoice page (docs/api.md#invoices), outside the key-authenticated API: the customer's browser
 * holds no key, only the token in hostedInvoiceUrl.
 */
export function hostedInvoiceRoutes(invoices: InvoiceService, limiter?: RateLimiter) {
  return (app: App) => {
    // Encapsulated, so that the form content type is accepted by these routes only.
    app.register(async (scope) => {
      scope.addContentTypeParser(
        'application/x-www-form-urlencoded',
        { parseAs: 'string', bodyLimit: 8 * 1024 },
        (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
      );
      // A customer's browser gets a page, never the API's JSON envelope; the log line carries no form field.
      scope.setErrorHandler((error: Error, request, reply) => {
        const locale = localeOf(request);
        if (statusOfThrown(error) < 500) {
          return sendPage(reply, 400, renderInvoiceMessage(locale, 'badRequestTitle', 'badRequest'));
        }
        // A database outage is the database's state, not a bug: 503 and a retry, as the API answers.
        if (markDatabaseUnavailable(error, request, reply, 'hosted invoice page')) {
          return sendPage(reply, 503, renderInvoiceMessage(locale, 'unavailableTitle', 'unavailable'));
        }
        request.log.error({ err: error }, 'hosted invoice page failed');
        return sendPage(reply, 500, renderInvoiceMessage(locale, 'errorTitle', 'errorText'));
      });
      const notFound = (request: FastifyRequest, reply: FastifyReply) =>
        sendPage(reply, 404, renderInvoiceMessage(localeOf(request), 'notFoundTitle', 'invoiceNotFound'));

      scope.get('/invoice/:invoiceId', { schema: { hide: true } }, async (request, reply) => {
        const { invoiceId } = request.params as { invoiceId: string };
        const view = await invoices.hostedPage(invoiceId, text((request.query as Record<string, unknown>).token));
        if (!view) return notFound(request, reply);
        return sendPage(reply, 200, renderInvoicePage(localeOf(request), view), view.brand);
      });

      // Post/redirect/get: the answer to the card form is the invoice page again (paid, or the
      // decline beside the form), or the 3-D Secure page; a refused form is shown at once.
      scope.post('/invoice/:invoiceId/pay', { schema: { hide: true } }, async (request, reply) => {
        const { invoiceId } = request.params as { invoiceId: string };
        // The card form is limited per client address and per invoice (card testing), on the
        // public-key routes' buckets; a limit that cannot be counted lets nothing through.
        const decision = limiter
          ? await limiter.take([`address:${request.ip}`, `invoice:${invoiceId}`]).catch(() => 'unavailable' as const)
          : { allowed: true as const };
        if (decision === 'unavailable') {
          reply.header('Retry-After', String(unavailableRetryAfterSeconds));
          return sendPage(reply, 503, renderInvoiceMessage(localeOf(request), 'unavailableTitle', 'unavailable'));
        }
        if (!decision.allowed) {
          reply.header('Retry-After', String(decision.retryAfterSeconds));
          return sendPage(
            reply,
            429,
            renderInvoiceMessage(localeOf(request), 'tooManyTitle', 'tooMany', {
              seconds: String(decision.retryAfterSeconds),
            }),
          );
        }
        const form = (request.body ?? {}) as Record<string, unknown>;
        const result = await invoices.payOnHostedPage(invoiceId, typeof form === 'object' ? form : {});
        switch (result.kind) {
          case 'not_found':
            return notFound(request, reply);
          case 'refused':
            return sendPage(
              reply,
              400,
              renderInvoicePage(localeOf(request), result.view, result.state),
              result.view.brand,
            );
          case 'redirect':
            return reply.code(303).header('cache-control', 'no-store').redirect(result.location, 303);
        }
      });
    });
  };
}
