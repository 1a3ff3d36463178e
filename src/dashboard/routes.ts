import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../http/errors.js';
import type { MerchantContext } from '../http/auth.js';
import type { App } from '../http/server.js';
import type { Permission } from '../team/permissions.js';
import { sameSecret, type Actor, type SessionView, type TeamService } from '../team/service.js';
import type { MerchantService } from '../merchants/service.js';
import type { PaymentService } from '../payments/service.js';
import type { PaymentMethodService } from '../payment-methods/service.js';
import type { RefundService } from '../refunds/service.js';
import type { EventService } from '../events/service.js';
import type { WebhookEndpointService } from '../webhooks/endpoints/service.js';
import type { WebhookDeliveryService } from '../webhooks/deliveries/service.js';
import type { WebhookCheckService } from '../webhooks/check/service.js';
import type { RequestLogService } from '../request-logs/service.js';
import type { CustomerService } from '../customers/service.js';
import type { InvoiceService } from '../invoices/service.js';
import { stylesheet } from './assets.js';
import { html, type SafeHtml } from './html.js';
import { dashboardBase, layout, type FieldErrors } from './layout.js';
import { authPages } from './auth-pages.js';
import { developerPages } from './developer-pages.js';
import { eventPages } from './event-pages.js';
import { requestLogPages } from './request-log-pages.js';
import { exportPages } from './export-pages.js';
import { paymentPages } from './payment-pages.js';
import { teamPages } from './team-pages.js';
import { accountPages } from './account-pages.js';
import { customerPages } from './customer-pages.js';
import { invoicePages } from './invoice-pages.js';
import { homePage } from './home-page.js';
import { settingsPages } from './settings-pages.js';

export interface DashboardDeps {
  team: TeamService;
  merchants: MerchantService;
  customers: CustomerService;
  payments: PaymentService;
  paymentMethods: PaymentMethodService;
  refunds: RefundService;
  invoices: InvoiceService;
  events: EventService;
  webhookEndpoints: WebhookEndpointService;
  webhookDeliveries: WebhookDeliveryService;
  webhookChecks: WebhookCheckService;
  requestLogs: RequestLogService;
  /** Cookies are Secure when the public URL is https. */
  publicUrl: () => string;
}

/** What a page handler of a signed-in member gets. */
export interface PageContext {
  session: SessionView;
  actor: Actor;
  /** The merchant and mode the services see: the session's mode, so test and live never mix. */
  merchant: MerchantContext;
  request: FastifyRequest;
  reply: FastifyReply;
  form: Record<string, string | string[]>;
}

export type PageHandler = (ctx: PageContext) => Promise<SafeHtml | void>;

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession: SessionView | null;
  }
}

export const sessionCookie = 'tessera_session';
const formCookie = 'tessera_form';

/** docs/decisions/0005: no inline script, no framing, forms only to this origin. */
const securityHeaders = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export function cookiesOf(request: FastifyRequest): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0) cookies[part.slice(0, index).trim()] = decodeURIComponent(part.slice(index + 1).trim());
  }
  return cookies;
}

export function setCookie(
  reply: FastifyReply,
  deps: DashboardDeps,
  name: string,
  value: string,
  maxAgeSeconds?: number,
) {
  const secure = deps.publicUrl().startsWith('https:') ? '; Secure' : '';
  const age = maxAgeSeconds === undefined ? '' : `; Max-Age=${maxAgeSeconds}`;
  const existing = reply.getHeader('set-cookie');
  const list = Array.isArray(existing) ? existing : existing ? [String(existing)] : [];
  reply.header('set-cookie', [
    ...list,
    `${name}=${encodeURIComponent(value)}; Path=${dashboardBase}; HttpOnly; SameSite=Lax${secure}${age}`,
  ]);
}

/** The double-submit token of the forms shown before sign-in (sign-in, set password, reset). */
export function anonymousFormToken(request: FastifyRequest, reply: FastifyReply, deps: DashboardDeps): string {
  const existing = cookiesOf(request)[formCookie];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString('base64url');
  setCookie(reply, deps, formCookie, token);
  return token;
}

export function text(form: Record<string, string | string[]>, name: string): string {
  const value = form[name];
  return Array.isArray(value) ? (value[0] ?? '') : (value ?? '');
}

export function list(form: Record<string, string | string[]>, name: string): string[] {
  const value = form[name];
  return Array.isArray(value) ? value : value === undefined || value === '' ? [] : [value];
}

/** The API's refusal of a field (`data.param`), to be shown beside it; anything else is thrown on. */
export function fieldErrors(err: unknown, fallbackField = 'form'): FieldErrors {
  if (err instanceof ApiError && (err.code === 'invalid_request' || err.status === 400)) {
    const param = typeof err.details?.param === 'string' ? err.details.param : fallbackField;
    return { [param]: err.message };
  }
  throw err;
}

export function html200(reply: FastifyReply, page: SafeHtml, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page.text);
}

export function redirect(reply: FastifyReply, path: string): FastifyReply {
  return reply.code(303).header('location', `${dashboardBase}${path}`).send();
}

export function actorOf(session: SessionView, request: FastifyRequest): Actor {
  return {
    merchantId: session.member.merchantId,
    memberId: session.member.id,
    role: session.member.role,
    mode: session.mode,
    clientAddress: request.ip,
  };
}

/** What a member whom the team requires to set up two-factor sign-in may still open. */
const enrolmentPaths = ['/account/two-factor', '/sign-out'];

/**
 * Registers a page or an action of signed-in members: no session → the sign-in page; the
 * permission is checked on the server (refusals audited, 403) before the handler runs.
 */
export function page(
  app: App,
  deps: DashboardDeps,
  method: 'GET' | 'POST',
  path: string,
  permission: Permission | null,
  handler: PageHandler,
): void {
  app.route({
    method,
    url: path,
    schema: { hide: true },
    handler: async (request, reply) => {
      const session = request.dashboardSession;
      if (!session) return redirect(reply, '/sign-in');
      // A team that requires two-factor sign-in: a member without it can only set it up (or leave).
      if (session.mustEnrolTwoFactor && !enrolmentPaths.some((open) => path.startsWith(open)))
        return redirect(reply, '/account/two-factor');
      const actor = actorOf(session, request);
      if (permission) await deps.team.require(actor, permission);
      const merchant: MerchantContext = {
        merchantId: session.member.merchantId,
        mode: session.mode,
        keyKind: 'private',
        // The dashboard creates no payments, so the capability flags are never read.
        tokenizationEnabled: false,
        mitEnabled: false,
      };
      const form = (request.body ?? {}) as Record<string, string | string[]>;
      const result = await handler({ session, actor, merchant, request, reply, form });
      if (result) return html200(reply, result, reply.statusCode);
      return reply;
    },
  });
}

function parseForm(body: string): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = Object.create(null);
  for (const [key, value] of new URLSearchParams(body)) {
    const existing = form[key];
    form[key] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return { ...form };
}

function errorPage(request: FastifyRequest, status: number, title: string, message: string): SafeHtml {
  return layout(
    { title, session: request.dashboardSession ?? null },
    html`<h1>${title}</h1>
      <p>${message}</p>
      <p><a href="${dashboardBase}">Back to the dashboard</a></p>`,
  );
}

/** The dashboard under /dashboard (issue 11): pages for team members; every action calls a domain service. */
export function dashboardRoutes(deps: DashboardDeps) {
  return (app: App) => {
    void app.register(
      async (scope) => {
        const dashboard = scope as unknown as App;
        dashboard.decorateRequest('dashboardSession', null);
        dashboard.addContentTypeParser(
          'application/x-www-form-urlencoded',
          { parseAs: 'string', bodyLimit: 64 * 1024 },
          (_request, body, done) => done(null, parseForm(String(body))),
        );
        dashboard.addHook('onRequest', async (request, reply) => {
          reply.headers(securityHeaders);
          request.dashboardSession = await deps.team.authenticate(cookiesOf(request)[sessionCookie]);
        });
        // CSRF (issue 11): a signed-in member's form carries the session's token; a form shown
        // before sign-in carries the token of its cookie (double submit).
        dashboard.addHook('preHandler', async (request) => {
          if (request.method !== 'POST') return;
          const given = text((request.body ?? {}) as Record<string, string>, '_csrf');
          const expected = request.dashboardSession?.csrfToken ?? cookiesOf(request)[formCookie] ?? '';
          if (!expected || !sameSecret(given, expected))
            throw new ApiError('permission_denied', 'This form has expired: reload the page and send it again', {
              param: '_csrf',
            });
        });
        dashboard.setErrorHandler((error, request, reply) => {
          if (error instanceof ApiError && error.code === 'permission_denied')
            return html200(reply, errorPage(request, 403, 'Not allowed', error.message), 403);
          if (error instanceof ApiError && error.code === 'resource_missing')
            return html200(reply, errorPage(request, 404, 'Not found', error.message), 404);
          if (error instanceof ApiError && error.status === 400)
            return html200(reply, errorPage(request, 400, 'Not valid', error.message), 400);
          const status = (error as { statusCode?: number }).statusCode;
          if (status && status >= 400 && status < 500)
            return html200(reply, errorPage(request, 400, 'Not valid', 'The request is not valid'), 400);
          request.log.error({ err: error }, 'dashboard page failed');
          return html200(
            reply,
            errorPage(request, 500, 'Something went wrong', `It has been logged with the trace id ${request.id}.`),
            500,
          );
        });
        dashboard.setNotFoundHandler((request, reply) =>
          html200(reply, errorPage(request, 404, 'Not found', 'There is no such page.'), 404),
        );
        dashboard.get('/assets/dashboard.css', { schema: { hide: true } }, async (_request, reply) =>
          reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(stylesheet),
        );
        authPages(dashboard, deps);
        developerPages(dashboard, deps);
        eventPages(dashboard, deps);
        requestLogPages(dashboard, deps);
        exportPages(dashboard, deps);
        paymentPages(dashboard, deps);
        homePage(dashboard, deps);
        teamPages(dashboard, deps);
        accountPages(dashboard, deps);
        customerPages(dashboard, deps);
        invoicePages(dashboard, deps);
        settingsPages(dashboard, deps);
      },
      { prefix: dashboardBase },
    );
  };
}
