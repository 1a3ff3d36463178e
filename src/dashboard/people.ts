/** Who a list's rows are about, as staff read them (docs/dashboard.md#pages): names and e-mails, not only ids. */
import type { DashboardDeps, PageContext } from './kit.js';
import type { Person } from './ui.js';

interface PaidBy {
  customerId: string | null;
  paymentMethod: string | null;
}

/** Who paid: the customer's name and e-mail, else the card holder's billing name and e-mail. */
export async function payersOf(
  deps: DashboardDeps,
  ctx: PageContext,
  payments: readonly PaidBy[],
): Promise<(payment: PaidBy) => Person | undefined> {
  const customerIds = payments.flatMap((payment) => (payment.customerId ? [payment.customerId] : []));
  const methodIds = payments.flatMap((payment) => (payment.paymentMethod ? [payment.paymentMethod] : []));
  const [customers, holders] = await Promise.all([
    deps.customers.peopleOf(ctx.merchant, customerIds),
    deps.paymentMethods.billingPeopleOf(ctx.merchant, methodIds),
  ]);
  return (payment) => {
    const customer = payment.customerId ? customers.get(payment.customerId) : undefined;
    if (customer && (customer.name || customer.email)) return customer;
    return payment.paymentMethod ? holders.get(payment.paymentMethod) : undefined;
  };
}
