import type { App } from '../http/server.js';
import { html } from './html.js';
import { csrfField, formError, layout, type FieldErrors } from './layout.js';
import { fieldErrors, page, text, type DashboardDeps, type PageContext } from './kit.js';

/** One origin a line; blank lines are ignored. */
function originsOf(value: string): string[] {
  return value
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/**
 * Settings (issue 14): the merchant's website origins, the pages allowed to frame the card field
 * of tessera.js. The merchant service checks the list exactly as the operator API does.
 */
export function settingsPages(app: App, deps: DashboardDeps): void {
  const settingsPage = async (
    ctx: PageContext,
    extra: { value?: string; errors?: FieldErrors; notice?: string } = {},
  ) => {
    const merchant = await deps.merchants.retrieve(ctx.actor.merchantId);
    const value = extra.value ?? merchant.websiteOrigins.join('\n');
    const error = extra.errors?.websiteOrigins;
    return layout(
      { title: 'Settings', session: ctx.session, current: '/settings', notice: extra.notice },
      html`<h1>Settings</h1>
        <h2>Website origins</h2>
        <form class="card" method="post" action="/dashboard/settings/website" novalidate>
          ${csrfField(ctx.session.csrfToken)} ${formError(extra.errors)}
          <div class="field">
            <label for="f-websiteOrigins">Origins of your website</label>
            <span class="hint" id="f-websiteOrigins-hint"
              >One a line, such as https://shop.example (scheme, host and port; no path). Only pages of these origins
              may show the card field of tessera.js. With none, any page may in the sandbox during development, and none
              in production.</span
            >
            <textarea
              id="f-websiteOrigins"
              name="websiteOrigins"
              rows="4"
              cols="50"
              aria-describedby="f-websiteOrigins-hint${error ? ' f-websiteOrigins-error' : ''}"
              ${error ? html`aria-invalid="true"` : ''}
            >
${value}</textarea>
            ${error ? html`<span class="error" id="f-websiteOrigins-error">${error}</span>` : ''}
          </div>
          <button type="submit">Save origins</button>
        </form>`,
    );
  };

  page(app, deps, 'GET', '/settings', 'settings.manage', (ctx) => settingsPage(ctx));

  page(app, deps, 'POST', '/settings/website', 'settings.manage', async (ctx) => {
    const value = text(ctx.form, 'websiteOrigins');
    try {
      const updated = await deps.merchants.setWebsiteOrigins(ctx.actor.merchantId, originsOf(value));
      await deps.team.audit(ctx.actor, 'merchant.website_origins_updated', ctx.actor.merchantId);
      return settingsPage(ctx, { notice: `Website origins saved (${updated.websiteOrigins.length}).` });
    } catch (err) {
      const errors = fieldErrors(err, 'websiteOrigins');
      ctx.reply.code(400);
      // websiteOrigins[2] and the like are shown beside the one field.
      return settingsPage(ctx, { value, errors: { websiteOrigins: Object.values(errors)[0] ?? '' } });
    }
  });
}
