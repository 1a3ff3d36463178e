import type { App } from '../http/server.js';
import { html } from '../web/html.js';
import { csrfField, formError, layout, type FieldErrors } from './layout.js';
import { fieldErrors, page, text, type DashboardDeps, type PageContext } from './kit.js';
import { processorAccountsSection } from './processor-accounts-section.js';

/** One origin a line; blank lines are ignored. */
function originsOf(value: string): string[] {
  return value
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
}

/** Branding (issue 22): the colour and logo of the hosted checkout and invoice pages. */
function brandingForm(ctx: PageContext, values: { brandColor: string; logoUrl: string }, errors?: FieldErrors) {
  const field = (name: 'brandColor' | 'logoUrl', label: string, hint: string, type: string) => {
    const error = errors?.[name];
    return html`<div class="field">
      <label for="f-${name}">${label}</label>
      <span class="hint" id="f-${name}-hint">${hint}</span>
      <input
        id="f-${name}"
        name="${name}"
        type="${type}"
        value="${values[name]}"
        aria-describedby="f-${name}-hint${error ? ` f-${name}-error` : ''}"
        ${error ? html`aria-invalid="true"` : ''}
      />
      ${error ? html`<span class="error" id="f-${name}-error">${error}</span>` : ''}
    </div>`;
  };
  return html`<h2>Checkout branding</h2>
    <form class="card" method="post" action="/dashboard/settings/branding" novalidate>
      ${csrfField(ctx.session.csrfToken)}
      ${field(
        'brandColor',
        'Brand colour',
        'Such as #1f5fbf: the Pay button and accent of your hosted checkout and invoice pages. Empty: Tessera blue.',
        'text',
      )}
      ${field(
        'logoUrl',
        'Logo URL',
        'An https address of your logo, shown above your business name on those pages. Empty: no logo.',
        'url',
      )}
      <button type="submit">Save branding</button>
    </form>`;
}

/**
 * Settings (issue 14): the merchant's website origins, the pages allowed to frame the card field
 * of tessera.js. The merchant service checks the list exactly as the operator API does. For the
 * Owner, also the merchant's processor accounts, read-only (docs/processors.md).
 */
export function settingsPages(app: App, deps: DashboardDeps): void {
  const settingsPage = async (
    ctx: PageContext,
    extra: {
      value?: string;
      errors?: FieldErrors;
      notice?: string;
      branding?: { brandColor: string; logoUrl: string };
      brandingErrors?: FieldErrors;
    } = {},
  ) => {
    const merchant = await deps.merchants.retrieve(ctx.actor.merchantId);
    const branding = extra.branding ?? { brandColor: merchant.brandColor ?? '', logoUrl: merchant.logoUrl ?? '' };
    const value = extra.value ?? merchant.websiteOrigins.join('\n');
    const error = extra.errors?.websiteOrigins;
    const processors = await processorAccountsSection(deps, ctx);
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
        </form>
        ${brandingForm(ctx, branding, extra.brandingErrors)} ${processors}`,
    );
  };

  page(app, deps, 'GET', '/settings', 'settings.manage', (ctx) => settingsPage(ctx));

  page(app, deps, 'POST', '/settings/branding', 'settings.manage', async (ctx) => {
    const branding = { brandColor: text(ctx.form, 'brandColor').trim(), logoUrl: text(ctx.form, 'logoUrl').trim() };
    try {
      await deps.merchants.setBranding(ctx.actor.merchantId, {
        brandColor: branding.brandColor === '' ? null : branding.brandColor,
        logoUrl: branding.logoUrl === '' ? null : branding.logoUrl,
      });
      await deps.team.audit(ctx.actor, 'merchant.branding_updated', ctx.actor.merchantId);
      return settingsPage(ctx, { notice: 'Checkout branding saved.' });
    } catch (err) {
      ctx.reply.code(400);
      return settingsPage(ctx, { branding, brandingErrors: fieldErrors(err, 'brandColor') });
    }
  });

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
