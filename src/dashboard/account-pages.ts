import type { App } from '../http/server.js';
import { roleNames } from '../team/permissions.js';
import type { Enrolment } from '../team/two-factor.js';
import { html } from '../web/html.js';
import { csrfField, field, formError, layout, select, type FieldErrors } from './layout.js';
import { fieldErrors, page, redirect, text, type DashboardDeps, type PageContext } from './kit.js';

const base = '/dashboard/account/two-factor';

/** A member's two-factor sign-in, and the Owner's page: team requirement and ownership transfer. */
export function accountPages(app: App, deps: DashboardDeps): void {
  const twoFactorPage = async (
    ctx: PageContext,
    extra: { enrolment?: Enrolment; confirming?: boolean; errors?: FieldErrors; notice?: string } = {},
  ) => {
    const state = await deps.team.twoFactorState(ctx.actor);
    const { errors, enrolment } = extra;
    const codeField = field({
      name: 'code',
      label: 'Code from your app',
      errors,
      autocomplete: 'one-time-code',
      inputmode: 'numeric',
      required: true,
    });
    let body;
    if (state.enrolled) {
      body = html`<p>Two-factor sign-in is <strong>on</strong>: after your password, you type a code from your app.</p>
        ${
          state.required
            ? html`${formError({ form: errors?.code ?? '' })}
                <p>Your team requires it, so it cannot be turned off.</p>`
            : html`<form class="card" method="post" action="${base}/disable" novalidate>
                ${csrfField(ctx.session.csrfToken)} ${codeField}
                <button class="danger" type="submit">Turn off two-factor sign-in</button>
              </form>`
        }`;
    } else if (enrolment || extra.confirming) {
      // The secret is in the answer to "Set up" only; it is not shown again (set up again for a new one).
      body = html`<ol>
          <li>
            In your authenticator app, add an account with this key (or open the link on your phone):
            ${
              enrolment
                ? html`<p class="secret" id="totp-secret">${enrolment.secret}</p>
                    <p class="secret" id="totp-uri">${enrolment.uri}</p>`
                : html`<p>(shown once, when you chose “Set up”)</p>`
            }
          </li>
          <li>Type the code the app shows to turn two-factor sign-in on.</li>
        </ol>
        <form class="card" method="post" action="${base}/confirm" novalidate>
          ${csrfField(ctx.session.csrfToken)} ${formError(errors)} ${codeField}
          <button type="submit">Turn on</button>
        </form>
        <form method="post" action="${base}/start">
          ${csrfField(ctx.session.csrfToken)}
          <button class="secondary" type="submit">Set up again with a new key</button>
        </form>`;
    } else {
      body = html`${
          ctx.session.mustEnrolTwoFactor
            ? html`<p class="form-error" role="alert">
                Your team requires two-factor sign-in: set it up to use the dashboard.
              </p>`
            : ''
        }
        <p>
          Two-factor sign-in is <strong>off</strong>. With it, signing in needs a code from an authenticator app too.
        </p>
        ${formError(errors)}
        <form method="post" action="${base}/start">
          ${csrfField(ctx.session.csrfToken)} <button type="submit">Set up two-factor sign-in</button>
        </form>`;
    }
    return layout(
      { title: 'Two-factor sign-in', session: ctx.session, current: '/account/two-factor', notice: extra.notice },
      html`<h1>Two-factor sign-in</h1>
        ${body}`,
    );
  };

  page(app, deps, 'GET', '/account/two-factor', null, (ctx) => twoFactorPage(ctx));

  page(app, deps, 'POST', '/account/two-factor/start', null, async (ctx) => {
    try {
      return twoFactorPage(ctx, { enrolment: await deps.team.startTwoFactor(ctx.actor) });
    } catch (err) {
      ctx.reply.code(400);
      return twoFactorPage(ctx, { errors: fieldErrors(err, 'form') });
    }
  });

  page(app, deps, 'POST', '/account/two-factor/confirm', null, async (ctx) => {
    try {
      await deps.team.confirmTwoFactor(ctx.actor, text(ctx.form, 'code'));
      // The session is read before the change: the next page is the member's first with it on.
      return twoFactorPage(
        { ...ctx, session: { ...ctx.session, mustEnrolTwoFactor: false } },
        { notice: 'Two-factor sign-in is on.' },
      );
    } catch (err) {
      ctx.reply.code(statusOf(err));
      return twoFactorPage(ctx, { confirming: true, errors: codeError(err) });
    }
  });

  page(app, deps, 'POST', '/account/two-factor/disable', null, async (ctx) => {
    try {
      await deps.team.disableTwoFactor(ctx.actor, text(ctx.form, 'code'));
      return twoFactorPage(ctx, { notice: 'Two-factor sign-in is off.' });
    } catch (err) {
      ctx.reply.code(statusOf(err));
      return twoFactorPage(ctx, { errors: codeError(err) });
    }
  });

  const ownerPage = async (ctx: PageContext, errors?: FieldErrors, notice?: string) => {
    const state = await deps.team.twoFactorState(ctx.actor);
    const others = (await deps.team.list(ctx.actor.merchantId)).filter(
      (member) => member.id !== ctx.actor.memberId && member.hasPassword,
    );
    return layout(
      { title: 'Ownership and security', session: ctx.session, current: '/team', notice },
      html`<p><a href="/dashboard/team">← Team</a></p>
        <h1>Ownership and security</h1>
        <h2>Two-factor sign-in for the whole team</h2>
        <form class="card" method="post" action="/dashboard/team/two-factor" novalidate>
          ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
          ${select({
            name: 'required',
            label: 'Two-factor sign-in',
            value: state.required ? 'on' : 'off',
            errors,
            choices: [
              ['off', 'Optional'],
              ['on', 'Required for every member'],
            ],
          })}
          <p class="hint">Members without it are sent to set it up after their password.</p>
          <button type="submit">Save</button>
        </form>
        <h2>Transfer ownership</h2>
        <form class="card" method="post" action="/dashboard/team/transfer-ownership" novalidate>
          ${csrfField(ctx.session.csrfToken)}
          ${select({ name: 'memberId', label: 'New Owner', errors, choices: [['', 'Choose a member'], ...others.map((member) => [member.id, `${member.name} <${member.email}> (${roleNames[member.role]})`] as const)] })}
          <p class="hint">You become Administrator. This is recorded in the audit log.</p>
          <button class="danger" type="submit">Transfer ownership</button>
        </form>`,
    );
  };

  page(app, deps, 'GET', '/team/owner', 'team.transfer_ownership', (ctx) => ownerPage(ctx));

  page(app, deps, 'POST', '/team/two-factor', 'team.require_two_factor', async (ctx) => {
    const required = text(ctx.form, 'required') === 'on';
    try {
      await deps.team.requireTwoFactor(ctx.actor, required);
      return ownerPage(
        ctx,
        undefined,
        required ? 'Two-factor sign-in is now required.' : 'Two-factor sign-in is optional.',
      );
    } catch (err) {
      ctx.reply.code(400);
      return ownerPage(ctx, fieldErrors(err, 'required'));
    }
  });

  page(app, deps, 'POST', '/team/transfer-ownership', 'team.transfer_ownership', async (ctx) => {
    try {
      await deps.team.transferOwnership(ctx.actor, text(ctx.form, 'memberId'));
      redirect(ctx.reply, '/team');
    } catch (err) {
      ctx.reply.code(400);
      return ownerPage(ctx, fieldErrors(err, 'memberId'));
    }
  });
}

function statusOf(err: unknown): number {
  return (err as { code?: string }).code === 'rate_limited' ? 429 : 400;
}

/** A wrong or rate-limited code is shown beside the code field. */
function codeError(err: unknown): FieldErrors {
  if ((err as { code?: string }).code === 'rate_limited') return { code: (err as Error).message };
  return fieldErrors(err, 'code');
}
