import type { ProcessorAccount } from '../processor-accounts/schemas.js';
import { can } from '../team/permissions.js';
import { html, type SafeHtml } from '../web/html.js';
import { table, when } from './layout.js';
import type { DashboardDeps, PageContext } from './kit.js';
import { statusBadge } from './ui.js';

const processorNames: Record<ProcessorAccount['processor'], string> = { adyen: 'Adyen', stripe: 'Stripe' };
const modeNames: Record<ProcessorAccount['mode'], string> = { test: 'Test', live: 'Live' };

/**
 * Settings' "Payment processors" (docs/dashboard.md, docs/processors.md): the merchant's processor
 * accounts, read-only and for the Owner only. The service's accounts carry no secret, only the
 * credentials hint (the key's last 4 characters); the operator connects and changes them.
 */
export async function processorAccountsSection(deps: DashboardDeps, ctx: PageContext): Promise<SafeHtml | ''> {
  if (!can(ctx.actor.role, 'processor_accounts.read')) return '';
  const accounts = await deps.processorAccounts.list(ctx.actor.merchantId);
  const rows = accounts.map(
    (account) =>
      html`<tr>
        <td>${processorNames[account.processor]}</td>
        <td>${modeNames[account.mode]}</td>
        <td>${statusBadge(account.status)}</td>
        <td><code>${account.credentialsHint}</code></td>
        <td><code>${account.webhookUrl}</code></td>
        <td>${account.lastNotificationAt === null ? 'never' : when(account.lastNotificationAt)}</td>
      </tr>`,
  );
  return html`<section aria-labelledby="processors-heading">
    <h2 id="processors-heading">Payment processors</h2>
    <p class="hint">
      The accounts that take your payments, connected by your Tessera operator (read-only here). Enter each account's
      webhook URL at the processor: as Adyen's standard notification URL, or as a Stripe webhook endpoint.
    </p>
    ${table(
      ['Processor', 'Mode', 'Status', 'Credentials', 'Webhook URL', 'Last notification'],
      rows,
      'No processor connected: test payments go to the built-in sandbox, and live keys need a live account that your Tessera operator connects.',
      'Payment processors',
    )}
  </section>`;
}
