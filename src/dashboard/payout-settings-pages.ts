import type { App } from '../http/server.js';
import { FinanceSettingsBody, type FinanceSettingsInput } from '../ledger/settings-schemas.js';
import { html } from '../web/html.js';
import { csrfField, field, formError, layout, select, type FieldErrors } from './layout.js';
import { fieldErrors, page, redirect, text, type DashboardDeps, type PageContext } from './kit.js';
import { given, validated } from './validate.js';

const path = '/balance/settings';
const intervals = [
  ['daily', 'Daily'],
  ['weekly', 'Weekly'],
  ['monthly', 'Monthly'],
  ['manual', 'By hand only'],
] as const;
const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

/** The form's fields, named as the API's (dotted) fields so that a refusal is shown beside its field. */
const names = {
  interval: 'payoutSchedule.interval',
  weeklyAnchor: 'payoutSchedule.weeklyAnchor',
  monthlyAnchor: 'payoutSchedule.monthlyAnchor',
  holderName: 'bankAccount.holderName',
  accountNumber: 'bankAccount.accountNumber',
  routingNumber: 'bankAccount.routingNumber',
  iban: 'bankAccount.iban',
  currency: 'bankAccount.currency',
} as const;
type Values = Partial<Record<keyof typeof names, string>>;

/** The form as the operator API's settings body: bank fields all empty mean "keep the account". */
function inputOf(values: Values): FinanceSettingsInput {
  const interval = values.interval ?? '';
  const schedule = {
    interval,
    ...(interval === 'weekly' && values.weeklyAnchor ? { weeklyAnchor: values.weeklyAnchor } : {}),
    ...(interval === 'monthly' && values.monthlyAnchor
      ? { monthlyAnchor: /^\d+$/.test(values.monthlyAnchor) ? Number(values.monthlyAnchor) : values.monthlyAnchor }
      : {}),
  };
  const bank = given({
    holderName: values.holderName?.trim(),
    accountNumber: values.accountNumber?.replace(/\s+/g, ''),
    routingNumber: values.routingNumber?.trim(),
    iban: values.iban?.trim(),
    currency: values.currency?.trim(),
  });
  return {
    payoutSchedule: schedule,
    ...(Object.keys(bank).length > 0 ? { bankAccount: bank } : {}),
  } as FinanceSettingsInput;
}

/**
 * The Owner's payout settings (docs/balances.md, docs/dashboard.md): the payout schedule and a bank
 * account, changed as the operator API changes them (the same checks, nothing written on a refusal),
 * after the Owner's password again. The account number is never shown back, only its last four.
 */
export function payoutSettingsPages(app: App, deps: DashboardDeps): void {
  const settingsPage = async (ctx: PageContext, values?: Values, errors?: FieldErrors) => {
    const merchant = await deps.merchants.retrieve(ctx.actor.merchantId);
    const { payoutSchedule: schedule, bankAccounts } = merchant;
    const shown: Values = values ?? {
      interval: schedule.interval,
      weeklyAnchor: schedule.weeklyAnchor ?? '',
      monthlyAnchor: schedule.monthlyAnchor === null ? '' : String(schedule.monthlyAnchor),
    };
    const input = (key: keyof typeof names, label: string, hint?: string) =>
      field({ name: names[key], label, value: shown[key] ?? '', errors, ...(hint ? { hint } : {}) });
    return layout(
      { title: 'Payout settings', session: ctx.session, current: '/balance' },
      html`<p><a href="/dashboard/balance">← Balance</a></p>
        <h1>Payout settings</h1>
        <form class="card" method="post" action="/dashboard${path}" novalidate>
          ${csrfField(ctx.session.csrfToken)} ${formError(errors)}
          <h2>Schedule</h2>
          ${select({ name: names.interval, label: 'Pay out', value: shown.interval, choices: intervals, errors })}
          ${select({
            name: names.weeklyAnchor,
            label: 'Day of the week (weekly)',
            value: shown.weeklyAnchor,
            choices: [['', '—'], ...weekdays.map((day) => [day, day] as const)],
            errors,
          })}
          ${input('monthlyAnchor', 'Day of the month (monthly)', '1 to 31; a shorter month pays on its last day')}
          <h2>Bank account</h2>
          <p class="hint">
            ${
              bankAccounts.length > 0
                ? `Now: ${bankAccounts.map((account) => `${account.currency}: ${account.holderName}, account •••• ${account.accountNumberLast4}`).join('; ')}. `
                : 'No bank account yet. '
            }One
            account per currency: payouts in a currency go to its account. Leave these empty to keep them; an account in
            a currency that has one replaces it.
          </p>
          ${input('holderName', 'Account holder')}
          ${input('accountNumber', 'Account number', '4 to 17 digits; only its last four are shown after')}
          ${input('routingNumber', 'Routing number', '9 digits (US accounts without IBAN)')} ${input('iban', 'IBAN')}
          ${input('currency', 'Currency', 'Payouts in this currency go to this account')}
          <h2>Confirm it is you</h2>
          ${field({
            name: 'password',
            label: 'Your password',
            type: 'password',
            autocomplete: 'current-password',
            required: true,
            errors,
          })}
          <button type="submit">Save payout settings</button>
        </form>`,
    );
  };

  page(app, deps, 'GET', path, 'payouts.manage', (ctx) => settingsPage(ctx));

  page(app, deps, 'POST', path, 'payouts.manage', async (ctx) => {
    const values = Object.fromEntries(
      Object.entries(names).map(([key, name]) => [key, text(ctx.form, name)]),
    ) as Values;
    // The account number is not shown back after a refusal.
    const shownAgain = { ...values, accountNumber: '' };
    if (!(await deps.team.confirmPassword(ctx.actor, text(ctx.form, 'password')))) {
      await deps.team.audit(ctx.actor, 'payouts.settings_reauthentication_failed', ctx.actor.merchantId);
      ctx.reply.code(400);
      return settingsPage(ctx, shownAgain, {
        password: 'That is not your password (after several wrong ones, wait 15 minutes)',
      });
    }
    try {
      const input = validated<FinanceSettingsInput>(FinanceSettingsBody, inputOf(values));
      await deps.merchants.update(ctx.actor.merchantId, input);
    } catch (err) {
      ctx.reply.code(400);
      return settingsPage(ctx, shownAgain, fieldErrors(err));
    }
    await deps.team.audit(ctx.actor, 'payouts.settings_changed', ctx.actor.merchantId);
    return redirect(ctx.reply, '/balance?saved=payout-settings');
  });
}
