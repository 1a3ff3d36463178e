/**
 * The dashboard's page kit: what every page module uses to register a page, read its form and
 * answer. Pages import from here, never from routes.ts, so that routes.ts (which wires every
 * page module) is imported by no page.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../core/errors.js';
import type { MerchantContext } from '../core/merchant-context.js';
import type { App } from '../http/server.js';
import type { Permission } from '../team/permissions.js';
import type { Actor, SessionView, TeamService } from '../team/service.js';
import type { MerchantService } from '../merchants/service.js';
import type { LedgerService } from '../ledger/service.js';
import type { PayoutService } from '../payouts/service.js';
import type { PaymentService } from '../payments/service.js';
import type { PaymentMethodService } from '../payment-methods/service.js';
import type { RefundService } from '../refunds/service.js';
import type { DisputeService } from '../disputes/service.js';
import type { FileService } from '../files/service.js';
import type { EventService } from '../events/service.js';
import type { WebhookEndpointService } from '../webhooks/endpoints/service.js';
import type { WebhookDeliveryService } from '../webhooks/deliveries/service.js';
import type { WebhookCheckService } from '../webhooks/check/service.js';
import type { EndpointHealthService } from '../webhooks/health/service.js';
import type { RecoveryService } from '../webhooks/recover/service.js';
import type { RequestLogService } from '../request-logs/service.js';
import type { CustomerService } from '../customers/service.js';
import type { InvoiceService } from '../invoices/service.js';
import type { ProcessorAccountService } from '../processor-accounts/service.js';
import type { SendingAddresses } from '../webhooks/egress/sending-addresses.js';
import type { Clock } from '../clock.js';
import { scriptSource, type SafeHtml } from '../web/html.js';
import { dashboardBase, type FieldErrors } from './layout.js';

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
  /** Endpoint health: the endpoints that need attention (home). */
  endpointHealth: EndpointHealthService;
  /** Recover: send an endpoint what it missed. */
  recovery: RecoveryService;
  requestLogs: RequestLogService;
  /** The merchant's processor accounts, read-only (Settings, Owners: docs/processors.md). */
  processorAccounts: Pick<ProcessorAccountService, 'list'>;
  /** The service's clock: quick date ranges and the home's periods are days of its "now". */
  clock: Clock;
  /** Cookies are Secure when the public URL is https. */
  publicUrl: () => string;
  /** docs/webhooks.md#sending-addresses-allow-lists: where webhooks come from, shown on the webhook pages. */
  sendingAddresses: SendingAddresses;
  /** The ledger: each payment's fee and net, the balance (docs/balances.md). */
  ledger?: LedgerService;
  /** Payouts and their reconciliation (docs/balances.md). */
  payouts?: PayoutService;
  /** Disputes and their evidence files (docs/disputes.md). */
  disputes?: DisputeService;
  files?: FileService;
  /** Outside production: a used sign-in link's page says how to get a fresh one (tessera dashboard-link). */
  development?: boolean;
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
export const formCookie = 'tessera_form';

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
  if (err instanceof DomainError && err.kind === 'invalid_request') {
    const param = typeof err.details?.param === 'string' ? err.details.param : fallbackField;
    return { [param]: err.message };
  }
  throw err;
}

/**
 * docs/decisions/0005, 0047: no framing, forms only to this origin, and scripts only under the
 * page's own nonce (a page without one runs none).
 */
export function dashboardPolicy(page: SafeHtml | null): string {
  return `default-src 'self'; script-src ${scriptSource(page)}; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'`;
}

export function html200(reply: FastifyReply, page: SafeHtml, status = 200): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('content-security-policy', dashboardPolicy(page))
    .send(page.text);
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
