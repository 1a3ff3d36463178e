import type { App } from '../http/server.js';
import { can, isRole, roleNames, roles } from '../team/permissions.js';
import { invalidField } from '../core/errors.js';
import { html } from '../web/html.js';
import { csrfField, field, formError, layout, select, table, when, type FieldErrors } from './layout.js';
import { fieldErrors, page, redirect, text, type DashboardDeps, type PageContext } from './kit.js';
import { emptyState } from './ui.js';

const invitableRoles = roles.filter((role) => role !== 'owner').map((role) => [role, roleNames[role]] as const);

/** Team, API keys and the audit log. */
export function teamPages(app: App, deps: DashboardDeps): void {
  const teamPage = async (
    ctx: PageContext,
    values: Record<string, string> = {},
    errors?: FieldErrors,
    notice?: string,
  ) => {
    const members = await deps.team.list(ctx.actor.merchantId);
    const rows = members.map(
      (member) =>
        html`<tr>
          <td>${member.name}<br /><span class="hint">${member.email}</span></td>
          <td>${roleNames[member.role]}${member.hasPassword ? '' : ' (invited)'}</td>
          <td>
            ${
              member.role === 'owner' || member.id === ctx.actor.memberId
                ? ''
                : html`<form class="inline" method="post" action="/dashboard/team/${member.id}/role">
                      ${csrfField(ctx.session.csrfToken)}
                      <label class="skip" for="role-${member.id}">Role of ${member.email}</label>
                      <select id="role-${member.id}" name="role">
                        ${invitableRoles.map(([role, name]) => html`<option value="${role}" ${role === member.role ? html`selected` : ''}>${name}</option>`)}
                      </select>
                      <button class="secondary" type="submit">Change role</button>
                    </form>
                    <form class="inline" method="post" action="/dashboard/team/${member.id}/remove">
                      ${csrfField(ctx.session.csrfToken)}
                      <button class="danger" type="submit" aria-label="Remove ${member.email}">Remove</button>
                    </form>`
            }
          </td>
        </tr>`,
    );
    return layout(
      { title: 'Team', session: ctx.session, current: '/team', notice },
      html`<h1>Team</h1>
        ${can(ctx.actor.role, 'team.transfer_ownership') ? html`<p><a href="/dashboard/team/owner">Ownership and two-factor sign-in for the team</a></p>` : ''}
        ${table(['Member', 'Role', ''], rows, 'No members.')}
        <h2>Invite a member</h2>
        <form class="card" method="post" action="/dashboard/team/invite" novalidate>
          ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
          ${field({ name: 'email', label: 'E-mail', type: 'email', value: values.email, errors, required: true })}
          ${field({ name: 'name', label: 'Name', value: values.name, errors })}
          ${select({ name: 'role', label: 'Role', value: values.role ?? 'developer', errors, choices: invitableRoles })}
          <button type="submit">Send invitation</button>
        </form>
        <form method="post" action="/dashboard/sign-out-everywhere">
          ${csrfField(ctx.session.csrfToken)} <button class="secondary" type="submit">Sign me out everywhere</button>
        </form>`,
    );
  };

  page(app, deps, 'GET', '/team', 'team.manage', (ctx) => teamPage(ctx));

  page(app, deps, 'POST', '/team/invite', 'team.manage', async (ctx) => {
    const values = { email: text(ctx.form, 'email'), name: text(ctx.form, 'name'), role: text(ctx.form, 'role') };
    try {
      if (!isRole(values.role))
        throw invalidField('role', 'role must be one of: administrator, developer, analyst, support');
      const member = await deps.team.invite(ctx.actor, { email: values.email, name: values.name, role: values.role });
      return teamPage(ctx, {}, undefined, `Invitation sent to ${member.email}.`);
    } catch (err) {
      ctx.reply.code(400);
      return teamPage(ctx, values, fieldErrors(err, 'email'));
    }
  });

  page(app, deps, 'POST', '/team/:id/role', 'team.manage', async (ctx) => {
    const role = text(ctx.form, 'role');
    if (!isRole(role)) throw invalidField('role', 'role must be one of: administrator, developer, analyst, support');
    await deps.team.changeRole(ctx.actor, (ctx.request.params as { id: string }).id, role);
    redirect(ctx.reply, '/team');
  });

  page(app, deps, 'POST', '/team/:id/remove', 'team.manage', async (ctx) => {
    await deps.team.remove(ctx.actor, (ctx.request.params as { id: string }).id);
    redirect(ctx.reply, '/team');
  });

  const keysPage = (ctx: PageContext, shown?: { privateKey: string; publicKey: string }) =>
    layout(
      { title: 'API keys', session: ctx.session, current: '/developers/api-keys' },
      html`<h1>API keys</h1>
        ${
          shown
            ? html`<div class="card">
                <p>Your new test keys, shown this once (the old ones no longer work):</p>
                <p>Private key</p>
                <p class="secret" id="private-key">${shown.privateKey}</p>
                <p>Public key</p>
                <p class="secret" id="public-key">${shown.publicKey}</p>
              </div>`
            : html`<p>
                Keys are shown only when they are made. Rolling makes new test keys; the old ones stop working at once.
              </p>`
        }
        <form method="post" action="/dashboard/developers/api-keys/roll">
          ${csrfField(ctx.session.csrfToken)} <button class="danger" type="submit">Roll test keys</button>
        </form>`,
    );

  page(app, deps, 'GET', '/developers/api-keys', 'api_keys.manage', async (ctx) => keysPage(ctx));

  page(app, deps, 'POST', '/developers/api-keys/roll', 'api_keys.manage', async (ctx) => {
    const rolled = await deps.merchants.rollKeys(ctx.actor.merchantId);
    await deps.team.audit(ctx.actor, 'api_keys.rolled', ctx.actor.merchantId);
    return keysPage(ctx, rolled.keys);
  });

  page(app, deps, 'GET', '/audit-log', 'audit_log.read', async (ctx) => {
    const entries = await deps.team.auditLog(ctx.actor.merchantId);
    return layout(
      { title: 'Audit log', session: ctx.session, current: '/audit-log' },
      html`<h1>Audit log</h1>
        ${table(
          ['When', 'Who', 'What', 'Object', 'From', 'Mode'],
          entries.map(
            (entry) =>
              html`<tr>
                <td>${when(new Date(entry.created_at))}</td>
                <td>${entry.actor}</td>
                <td>${entry.action}</td>
                <td>${entry.object_id ?? ''}</td>
                <td>${entry.client_address ?? ''}</td>
                <td>${entry.mode}</td>
              </tr>`,
          ),
          emptyState({
            title: 'Nothing recorded yet',
            body: html`Sign-ins, invitations, role changes, key rolls and webhook endpoint changes are recorded here,
              with who made them and from where. <a href="/dashboard/team">Invite your team</a> to get started.`,
          }),
        )}`,
    );
  });
}
