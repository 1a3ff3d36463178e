import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../http/server.js';
import { maxFailuresPerAccount, signInWindowMs } from '../team/service.js';
import { html } from '../web/html.js';
import { field, formError, layout, type FieldErrors } from './layout.js';
import {
  anonymousFormToken,
  fieldErrors,
  html200,
  page,
  redirect,
  sessionCookie,
  setCookie,
  text,
  type DashboardDeps,
} from './kit.js';

const lockMinutes = signInWindowMs / 60_000;

const refusals = {
  invalid: { status: 401, message: 'The e-mail address or the password is not right.' },
  account_locked: {
    status: 429,
    message: `Too many failed sign-ins for this account (${maxFailuresPerAccount}): try again in ${lockMinutes} minutes, or reset your password.`,
  },
  address_limited: {
    status: 429,
    message: `Too many failed sign-ins from your network: try again in ${lockMinutes} minutes.`,
  },
} as const;

/** Sign-in, one-time links (invitation, reset, development sign-in), sign-out and the mode switch. */
export function authPages(app: App, deps: DashboardDeps): void {
  const signInPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    values: { email?: string; notice?: string },
    errors?: FieldErrors,
  ) =>
    layout(
      { title: 'Sign in', session: null, notice: values.notice },
      html`<div class="sign-in card">
        <h1>Sign in</h1>
        ${formError(errors)}
        <form method="post" action="/dashboard/sign-in" novalidate>
          <input type="hidden" name="_csrf" value="${anonymousFormToken(request, reply, deps)}" />
          ${field({ name: 'email', label: 'E-mail', type: 'email', value: values.email, errors, autocomplete: 'username', required: true })}
          ${field({ name: 'password', label: 'Password', type: 'password', errors, autocomplete: 'current-password', required: true })}
          <button type="submit">Sign in</button>
        </form>
        <p><a href="/dashboard/forgot-password">Forgot your password?</a></p>
      </div>`,
    );

  app.get('/sign-in', { schema: { hide: true } }, async (request, reply) => {
    if (request.dashboardSession) return redirect(reply, '');
    return html200(reply, signInPage(request, reply, {}));
  });

  app.post('/sign-in', { schema: { hide: true } }, async (request, reply) => {
    const form = (request.body ?? {}) as Record<string, string>;
    const email = text(form, 'email');
    const result = await deps.team.signIn(email, text(form, 'password'), request.ip);
    if (result.ok === false) {
      const refusal = refusals[result.reason];
      return html200(reply, signInPage(request, reply, { email }, { form: refusal.message }), refusal.status);
    }
    if (result.ok === 'code') return html200(reply, codePage(request, reply, result.challenge));
    setCookie(reply, deps, sessionCookie, result.sessionToken);
    return redirect(reply, '');
  });

  // The second step of sign-in for members with two-factor on: the password step's challenge
  // (single use, 5 minutes) travels in the form, and the code is checked and rate limited.
  const codePage = (request: FastifyRequest, reply: FastifyReply, challenge: string, errors?: FieldErrors) =>
    layout(
      { title: 'Two-factor sign-in', session: null },
      html`<div class="sign-in card">
        <h1>Enter your code</h1>
        <p>Open your authenticator app and type the 6-digit code it shows for Tessera.</p>
        <form method="post" action="/dashboard/sign-in/code" novalidate>
          <input type="hidden" name="_csrf" value="${anonymousFormToken(request, reply, deps)}" />
          <input type="hidden" name="challenge" value="${challenge}" />
          ${field({ name: 'code', label: 'Code', errors, autocomplete: 'one-time-code', inputmode: 'numeric', required: true })}
          <button type="submit">Sign in</button>
        </form>
      </div>`,
    );

  const codeRefusals = {
    wrong: { status: 401, message: 'This code is not right: type the 6 digits your app shows now.' },
    limited: { status: 429, message: `Too many wrong codes: try again in ${lockMinutes} minutes.` },
  } as const;

  app.post('/sign-in/code', { schema: { hide: true } }, async (request, reply) => {
    const form = (request.body ?? {}) as Record<string, string>;
    const challenge = text(form, 'challenge');
    const result = await deps.team.signInWithCode(challenge, text(form, 'code'), request.ip);
    if (result.ok) {
      setCookie(reply, deps, sessionCookie, result.sessionToken);
      return redirect(reply, '');
    }
    if (result.reason === 'expired')
      return html200(
        reply,
        signInPage(request, reply, {}, { form: 'Your sign-in took too long: enter your password again.' }),
        401,
      );
    const refusal = codeRefusals[result.reason];
    return html200(reply, codePage(request, reply, challenge, { code: refusal.message }), refusal.status);
  });

  const setPasswordPage = (
    request: FastifyRequest,
    reply: FastifyReply,
    token: string,
    email: string,
    errors?: FieldErrors,
  ) =>
    layout(
      { title: 'Choose a password', session: null },
      html`<div class="sign-in card">
        <h1>Choose a password</h1>
        <p>For ${email}.</p>
        ${formError(errors)}
        <form method="post" action="/dashboard/set-password" novalidate>
          <input type="hidden" name="_csrf" value="${anonymousFormToken(request, reply, deps)}" />
          <input type="hidden" name="token" value="${token}" />
          <input type="text" name="username" value="${email}" autocomplete="username" hidden />
          ${field({ name: 'password', label: 'New password', type: 'password', errors, autocomplete: 'new-password', hint: 'At least 10 characters.', required: true })}
          <button type="submit">Set password and sign in</button>
        </form>
      </div>`,
    );

  const expiredLink = (reply: FastifyReply) =>
    html200(
      reply,
      layout(
        { title: 'Link expired', session: null },
        html`<h1>This link has expired or has been used already</h1>
          <p>
            Ask for a new one: <a href="/dashboard/forgot-password">reset your password</a>, or ask your team's Owner or
            Administrator to invite you again.
          </p>
          ${
            deps.development
              ? html`<p>
                  Signing in as the sandbox Owner? Run <code>npx tessera dashboard-link</code> at the repository's root
                  for a fresh link (<code>npm start</code> prints one too).
                </p>`
              : ''
          }`,
      ),
      410,
    );

  app.get('/set-password', { schema: { hide: true } }, async (request, reply) => {
    const token = text(request.query as Record<string, string>, 'token');
    const email = token ? await deps.team.linkEmail(token, ['invitation', 'password_reset']) : null;
    if (!email) return expiredLink(reply);
    return html200(reply, setPasswordPage(request, reply, token, email));
  });

  app.post('/set-password', { schema: { hide: true } }, async (request, reply) => {
    const form = (request.body ?? {}) as Record<string, string>;
    const token = text(form, 'token');
    const email = token ? await deps.team.linkEmail(token, ['invitation', 'password_reset']) : null;
    if (!email) return expiredLink(reply);
    try {
      const sessionToken = await deps.team.setPasswordWithLink(token, text(form, 'password'), request.ip);
      setCookie(reply, deps, sessionCookie, sessionToken);
      return redirect(reply, '');
    } catch (err) {
      const errors = fieldErrors(err, 'password');
      if (errors.token) return expiredLink(reply);
      return html200(reply, setPasswordPage(request, reply, token, email, errors), 400);
    }
  });

  // Development's one-time sign-in link: the GET shows a button, so that a link preview or a
  // mail scanner that fetches the URL does not use it up.
  app.get('/link', { schema: { hide: true } }, async (request, reply) => {
    const token = text(request.query as Record<string, string>, 'token');
    const email = token ? await deps.team.linkEmail(token, ['sign_in']) : null;
    if (!email) return expiredLink(reply);
    return html200(
      reply,
      layout(
        { title: 'Sign in', session: null },
        html`<div class="sign-in card">
          <h1>Sign in as ${email}</h1>
          <form method="post" action="/dashboard/link">
            <input type="hidden" name="_csrf" value="${anonymousFormToken(request, reply, deps)}" />
            <input type="hidden" name="token" value="${token}" />
            <button type="submit">Continue</button>
          </form>
        </div>`,
      ),
    );
  });

  app.post('/link', { schema: { hide: true } }, async (request, reply) => {
    const sessionToken = await deps.team.signInWithLink(
      text((request.body ?? {}) as Record<string, string>, 'token'),
      request.ip,
    );
    if (!sessionToken) return expiredLink(reply);
    setCookie(reply, deps, sessionCookie, sessionToken);
    return redirect(reply, '');
  });

  const forgotPage = (request: FastifyRequest, reply: FastifyReply, email: string, notice?: string) =>
    layout(
      { title: 'Reset your password', session: null, notice },
      html`<div class="sign-in card">
        <h1>Reset your password</h1>
        <form method="post" action="/dashboard/forgot-password" novalidate>
          <input type="hidden" name="_csrf" value="${anonymousFormToken(request, reply, deps)}" />
          ${field({ name: 'email', label: 'E-mail', type: 'email', value: email, autocomplete: 'username', required: true })}
          <button type="submit">Send a reset link</button>
        </form>
        <p><a href="/dashboard/sign-in">Back to sign-in</a></p>
      </div>`,
    );

  app.get('/forgot-password', { schema: { hide: true } }, async (request, reply) =>
    html200(reply, forgotPage(request, reply, '')),
  );

  app.post('/forgot-password', { schema: { hide: true } }, async (request, reply) => {
    const email = text((request.body ?? {}) as Record<string, string>, 'email');
    await deps.team.requestPasswordReset(email);
    return html200(
      reply,
      forgotPage(
        request,
        reply,
        email,
        'If this address belongs to a team member, a reset link is on its way (valid 72 hours).',
      ),
    );
  });

  page(app, deps, 'POST', '/sign-out', null, async ({ session, reply }) => {
    await deps.team.signOut(session);
    setCookie(reply, deps, sessionCookie, '', 0);
    redirect(reply, '/sign-in');
  });

  page(app, deps, 'POST', '/sign-out-everywhere', null, async ({ actor, reply }) => {
    await deps.team.signOutEverywhere(actor);
    setCookie(reply, deps, sessionCookie, '', 0);
    redirect(reply, '/sign-in');
  });

  page(app, deps, 'POST', '/mode', null, async ({ session, form, reply }) => {
    await deps.team.setMode(session, text(form, 'mode') === 'live' ? 'live' : 'test');
    redirect(reply, '');
  });
}
