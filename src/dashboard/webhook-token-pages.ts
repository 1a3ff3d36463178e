import type { App } from '../http/server.js';
import type { WebhookEndpoint } from '../webhooks/endpoints/schemas.js';
import { RollTokenBody } from '../webhooks/endpoints/schemas.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, formError, select, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, validated } from './validate.js';

/*
 * The endpoint page's signing token (docs/webhooks.md#endpoints-and-tokens, docs/webhooks.md#standard-webhooks-format): reveal, and roll — at once, or for a
 * standard-format endpoint with a grace period (none … 24 h) during which the old key keeps signing
 * beside the new one, and to ed25519 or back (docs/decisions/0026). The endpoint service writes the
 * audit row with the member and address; the token is in the answer to the POST only.
 */

const base = '/dashboard/developers';

/** The grace periods offered (seconds); the API accepts any number up to 86400. */
const graceChoices = [
  ['0', 'None: the old token stops at once'],
  ['300', '5 minutes'],
  ['3600', '1 hour'],
  ['21600', '6 hours'],
  ['86400', '24 hours'],
] as const;

const algorithmChoices = [
  ['hmac-sha256', 'HMAC-SHA256 (v1, whsec_ token)'],
  ['ed25519', 'ed25519 (v1a, public key whpk_)'],
] as const;

/** What the section shows after an action: the token just revealed or made, or the roll form's refusal. */
export interface TokenView {
  token?: SafeHtml;
  values?: Record<string, string>;
  errors?: FieldErrors;
}

/** Without the standard format the form has no fields: a refusal naming one is shown above the button. */
function shownAbove(errors: FieldErrors | undefined): FieldErrors | undefined {
  const first = Object.values(errors ?? {})[0];
  return first === undefined ? errors : { form: first };
}

/** The "Signing token" section of the endpoint page. */
export function tokenSection(ctx: PageContext, endpoint: WebhookEndpoint, view: TokenView = {}): SafeHtml {
  const standard = endpoint.format === 'standard';
  const values = view.values ?? { expiresInSeconds: '0', signatureAlgorithm: endpoint.signatureAlgorithm };
  const hidden = endpoint.publicKey
    ? html`<p>Signs with ed25519. The public key, which verifies the <code>v1a,</code> signatures:</p>
        <p class="secret" id="public-key">${endpoint.publicKey}</p>`
    : html`<p>The token is hidden. Revealing it is recorded in the audit log.</p>`;
  return html`<h2>Signing token</h2>
    <div class="card">
      ${view.token ?? hidden}
      <div class="actions">
        <form method="post" action="${base}/webhooks/${endpoint.id}/reveal">
          ${csrfField(ctx.session.csrfToken)}<button type="submit">Reveal token</button>
        </form>
      </div>
    </div>
    <form class="card" id="roll" method="post" action="${base}/webhooks/${endpoint.id}/roll" novalidate>
      ${csrfField(ctx.session.csrfToken)} ${formError(standard ? view.errors : shownAbove(view.errors))}
      ${
        standard
          ? html`${select({ name: 'expiresInSeconds', label: 'Grace period', value: values.expiresInSeconds, errors: view.errors, choices: graceChoices })}
              ${select({ name: 'signatureAlgorithm', label: 'Signature algorithm', value: values.signatureAlgorithm, errors: view.errors, choices: algorithmChoices })}
              <p class="hint">
                During the grace period the old key keeps signing beside the new one (two signatures in
                webhook-signature), so receivers can switch without losing a notification.
              </p>`
          : html`<p class="hint">
              Rolling makes a new token; the old one stops working at once. A grace period needs the Standard Webhooks
              format (Settings, below): the Signature header carries one signature.
            </p>`
      }
      <button class="danger" type="submit">Roll token</button>
    </form>`;
}

/** POST …/reveal and …/roll: the API's reveal_token and roll_token, audited with the member and address. */
export function webhookTokenPages(
  app: App,
  deps: DashboardDeps,
  detailPage: (ctx: PageContext, id: string, token: TokenView) => Promise<SafeHtml>,
): void {
  const who = (ctx: PageContext) => ({
    traceId: ctx.request.id,
    member: `member:${ctx.actor.memberId}`,
    clientAddress: ctx.actor.clientAddress,
  });

  page(app, deps, 'POST', '/developers/webhooks/:id/reveal', 'webhooks.reveal_token', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const { token } = await deps.webhookEndpoints.revealToken(ctx.merchant, id, who(ctx));
    return detailPage(ctx, id, {
      token: html`<p>The token:</p>
        <p class="secret" id="token">${token}</p>`,
    });
  });

  page(app, deps, 'POST', '/developers/webhooks/:id/roll', 'webhooks.roll_token', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    const values = {
      expiresInSeconds: text(ctx.form, 'expiresInSeconds').trim(),
      signatureAlgorithm: text(ctx.form, 'signatureAlgorithm').trim(),
    };
    try {
      const input = validated<RollTokenBody>(RollTokenBody, {
        ...given({ signatureAlgorithm: values.signatureAlgorithm }),
        ...(values.expiresInSeconds === '' ? {} : { expiresInSeconds: Number(values.expiresInSeconds) }),
      });
      const rolled = await deps.webhookEndpoints.rollToken(ctx.merchant, id, who(ctx), input);
      const until = rolled.previousTokenExpiresAt;
      return detailPage(ctx, id, {
        token: html`<p>
            ${rolled.token.startsWith('whpk_') ? 'The new public key' : 'The new token'}
            ${until ? `(the old one keeps signing beside it until ${when(until)}):` : '(the old one no longer works):'}
          </p>
          <p class="secret" id="token">${rolled.token}</p>`,
      });
    } catch (err) {
      ctx.reply.code(400);
      return detailPage(ctx, id, { values, errors: fieldErrors(err, 'expiresInSeconds') });
    }
  });
}
