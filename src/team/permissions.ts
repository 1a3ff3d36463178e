/**
 * The role matrix of docs/dashboard.md#roles and issue 11, as ONE table: every dashboard action names one of
 * these permissions, and the server checks it (a hidden button is not a permission). docs/dashboard.md
 * shows the same table; test/dashboard-roles.test.ts checks every role against every gated action.
 */
export const roles = ['owner', 'administrator', 'developer', 'analyst', 'support'] as const;
export type Role = (typeof roles)[number];

export const roleNames: Record<Role, string> = {
  owner: 'Owner',
  administrator: 'Administrator',
  developer: 'Developer',
  analyst: 'Analyst',
  support: 'Support',
};

const everyone: readonly Role[] = roles;
const managers: readonly Role[] = ['owner', 'administrator'];
const developers: readonly Role[] = ['owner', 'administrator', 'developer'];

export const permissions = {
  /** Home, payments, customers, refunds, invoices: read. */
  'payments.read': everyone,
  'customers.read': everyone,
  'refunds.read': everyone,
  'invoices.read': everyone,
  /** Create a refund (full or partial). */
  'refunds.create': ['owner', 'administrator', 'support'],
  /** Send again an invoice already sent. */
  'invoices.resend': ['owner', 'administrator', 'support'],
  /** Create a draft, finalize, void. */
  'invoices.manage': managers,
  /** Webhook endpoints, token reveal and roll, deliveries and resend, events, API request logs (docs/dashboard.md#roles). */
  'webhooks.read': developers,
  'webhooks.manage': developers,
  'webhooks.reveal_token': developers,
  'webhooks.roll_token': developers,
  'webhooks.resend': developers,
  'events.read': developers,
  'request_logs.read': developers,
  /** API keys: see their hints, roll them. */
  'api_keys.manage': managers,
  /** Invite, change roles, remove members (an Administrator never touches the Owner). */
  'team.manage': managers,
  /** Transfer ownership, require two-factor sign-in for the whole team. */
  'team.transfer_ownership': ['owner'],
  'team.require_two_factor': ['owner'],
  'audit_log.read': managers,
  /** Merchant settings: the website origins that may frame the card field of tessera.js (issue 14). */
  'settings.manage': managers,
  /**
   * The merchant's processor accounts on Settings, read-only (docs/processors.md): which processor
   * takes its live payments is the Owner's business; the operator connects them.
   */
  'processor_accounts.read': ['owner'],
  'exports.read': ['owner', 'administrator', 'analyst'],
  /** Disputes and their evidence, read (docs/disputes.md): the people who answer them and those who watch the money. */
  'disputes.read': ['owner', 'administrator', 'analyst'],
  /** Stage and submit evidence, accept a dispute. */
  'disputes.manage': managers,
  /** The payout schedule and bank accounts (docs/balances.md), re-authenticated by password. */
  'payouts.manage': ['owner'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof permissions;

export function can(role: Role, permission: Permission): boolean {
  return (permissions[permission] as readonly Role[]).includes(role);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (roles as readonly string[]).includes(value);
}
