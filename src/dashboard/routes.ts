import type { FastifyRequest } from 'fastify';
import type { App } from '../http/server.js';
import { DomainError } from '../core/errors.js';
import { markDatabaseUnavailable } from '../http/error-responses.js';
import { statusOfThrown } from '../http/error-status.js';
import { sameSecret } from '../team/service.js';
import { html, type SafeHtml } from '../web/html.js';
import { dashboardBase, layout } from './layout.js';
import { cookiesOf, dashboardPolicy, formCookie, html200, sessionCookie, text, type DashboardDeps } from './kit.js';
import { script, stylesheet } from './assets.js';
import { authPages } from './auth-pages.js';
import { developerPages } from './developer-pages.js';
import { eventPages } from './event-pages.js';
import { requestLogPages } from './request-log-pages.js';
import { exportPages } from './export-pages.js';
import { paymentPages } from './payment-pages.js';
import { teamPages } from './team-pages.js';
import { accountPages } from './account-pages.js';
import { customerPages } from './customer-pages.js';
import { refundPages } from './refund-pages.js';
import { disputePages } from './dispute-pages.js';
import { balancePages } from './balance-pages.js';
import { payoutSettingsPages } from './payout-settings-pages.js';
import { invoicePages } from './invoice-pages.js';
import { homePage } from './home-page.js';
import { settingsPages } from './settings-pages.js';

/** docs/decisions/0005: every answer's headers; a page's own policy adds its script nonce (html200). */
const securityHeaders = {
  'content-security-policy': dashboardPolicy(null),
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

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
            throw new DomainError('permission_denied', 'This form has expired: reload the page and send it again', {
              param: '_csrf',
            });
        });
        dashboard.setErrorHandler((error, request, reply) => {
          if (error instanceof DomainError && error.code === 'permission_denied')
            return html200(reply, errorPage(request, 403, 'Not allowed', error.message), 403);
          if (error instanceof DomainError && error.code === 'resource_missing')
            return html200(reply, errorPage(request, 404, 'Not found', error.message), 404);
          if (error instanceof DomainError && error.kind === 'invalid_request')
            return html200(reply, errorPage(request, 400, 'Not valid', error.message), 400);
          const status = statusOfThrown(error);
          if (status >= 400 && status < 500)
            return html200(reply, errorPage(request, 400, 'Not valid', 'The request is not valid'), 400);
          // A database outage is the database's state, not a bug: 503 and a retry, as the API answers.
          if (markDatabaseUnavailable(error, request, reply, 'dashboard')) {
            return html200(
              reply,
              errorPage(
                request,
                503,
                'Unavailable just now',
                'The dashboard cannot reach its database just now; nothing was changed. Reload the page in a moment.',
              ),
              503,
            );
          }
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
        dashboard.get('/assets/dashboard.js', { schema: { hide: true } }, async (_request, reply) =>
          reply.header('cache-control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(script),
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
        refundPages(dashboard, deps);
        disputePages(dashboard, deps);
        balancePages(dashboard, deps);
        payoutSettingsPages(dashboard, deps);
        invoicePages(dashboard, deps);
        settingsPages(dashboard, deps);
      },
      { prefix: dashboardBase },
    );
  };
}
