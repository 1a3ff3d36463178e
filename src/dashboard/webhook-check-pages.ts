import type { App } from '../http/server.js';
import { RunCheckBody, type WebhookCheck } from '../webhooks/check/schemas.js';
import type { WebhookEndpoint } from '../webhooks/endpoints/schemas.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, field, formError, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, validated } from './validate.js';
import { sendingAddressesSection } from './sending-addresses.js';
import { badge, emptyState } from './ui.js';

const base = '/dashboard/developers';

/** What the endpoint page shows of the go-live check: the form, the result just run, the history. */
export interface CheckView {
  result?: WebhookCheck;
  values?: Record<string, string>;
  errors?: FieldErrors;
}

/** Renders one check's verdicts, case by case (issue 12: each case says why it passed or failed). */
function verdicts(check: WebhookCheck): SafeHtml {
  return table(
    ['Case', 'Verdict', 'HTTP', 'Latency', 'Why'],
    check.cases.map(
      (item) =>
        html`<tr>
          <td>${item.name.replace(/_/g, ' ')}</td>
          <td>${item.passed ? badge('Passed', 'good') : badge('Failed', 'bad')}</td>
          <td class="num">${item.httpStatus ?? '—'}</td>
          <td class="num">${item.latencyMs} ms</td>
          <td>${item.reason}</td>
        </tr>`,
    ),
    'No cases.',
  );
}

function summary(check: WebhookCheck): string {
  const failed = check.cases.filter((item) => !item.passed).length;
  return check.passed
    ? 'Ready to go live: every case passed'
    : `Not ready: ${failed} of ${check.cases.length} cases failed`;
}

/** The "Run go-live check" section of the endpoint page, with the stored history of checks. */
export async function checkSection(
  ctx: PageContext,
  deps: DashboardDeps,
  endpoint: WebhookEndpoint,
  view: CheckView = {},
): Promise<SafeHtml> {
  const history = await deps.webhookChecks.list(ctx.merchant, endpoint.id, { limit: 10 });
  const { errors, result } = view;
  return html`<h2>Go-live check</h2>
    <form class="card" method="post" action="${base}/webhooks/${endpoint.id}/check" novalidate>
      ${csrfField(ctx.session.csrfToken)}
      ${formError(endpoint.kind === 'static' && errors?.url ? { form: errors.url } : errors)}
      <p class="hint">
        Sends test deliveries (marked <code>"test": true</code>) signed with this endpoint's token and judges each
        answer: valid ones must be answered <code>success</code>, forged, stale or altered ones refused.
      </p>
      ${
        endpoint.kind === 'dynamic'
          ? field({
              name: 'url',
              label: 'notifyUrl to check',
              type: 'url',
              value: view.values?.url,
              errors,
              required: true,
              hint: 'The notifyUrl your payments use',
            })
          : ''
      }
      <button type="submit">Run go-live check</button>
    </form>
    ${sendingAddressesSection(deps.sendingAddresses)}
    ${
      result
        ? html`<section class="card" aria-labelledby="check-result">
            <h3 id="check-result" class="${result.passed ? 'status-succeeded' : 'status-failed'}">
              ${summary(result)}
            </h3>
            <p>${result.url} · ${when(result.created)}</p>
            ${verdicts(result)}
          </section>`
        : ''
    }
    <h3>Earlier checks</h3>
    ${
      history.data.length === 0
        ? emptyState({
            title: 'No check run yet',
            body: 'Run the go-live check above before this endpoint receives live payments: it shows, case by case, whether the endpoint verifies signatures and answers as it should.',
          })
        : history.data.map(
            (check) =>
              html`<details class="card">
                <summary>
                  ${when(check.created)} · ${check.url} ·
                  <span class="${check.passed ? 'status-succeeded' : 'status-failed'}"
                    >${check.passed ? 'passed' : 'failed'}</span
                  >
                </summary>
                ${verdicts(check)}
              </details>`,
          )
    }`;
}

/** POST …/check: the check service's run (the API's POST /webhook_endpoints/{id}/check), audited. */
export function webhookCheckPages(
  app: App,
  deps: DashboardDeps,
  detailPage: (ctx: PageContext, id: string, check: CheckView) => Promise<SafeHtml>,
): void {
  page(app, deps, 'POST', '/developers/webhooks/:id/check', 'webhooks.manage', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const values = { url: text(ctx.form, 'url').trim() };
    try {
      const input = validated<RunCheckBody>(RunCheckBody, given(values));
      const result = await deps.webhookChecks.run(ctx.merchant, id, input);
      await deps.team.audit(ctx.actor, `webhook_endpoint.checked:${result.passed ? 'passed' : 'failed'}`, id);
      return detailPage(ctx, id, { result, values });
    } catch (err) {
      const errors = fieldErrors(err, 'url');
      ctx.reply.code(400);
      return detailPage(ctx, id, { values, errors });
    }
  });
}
