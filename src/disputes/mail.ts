/**
 * E-mails about disputes (docs/disputes.md, E-mail): to the merchant's Owners and Administrators
 * when a dispute opens, and 3 days before its `dueBy` while it still awaits a response. Sent by
 * jobs scheduled in the dispute's transaction, so a message goes once the dispute is committed.
 * Plain text: amounts, dates, ids and the dispute's reason; never card data.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Queryable } from '../db/db.js';
import type { JobRunner } from '../jobs/runner.js';
import type { MailTransport } from '../mail/transport.js';
import type { Role } from '../team/permissions.js';
import { isoTimestamp } from '../time.js';
import * as queries from './queries.js';
import { disputeStates } from './states.js';

export const disputeMailJobs = { opened: 'dispute.opened_mail', reminder: 'dispute.due_soon_mail' } as const;

const toldRoles: readonly Role[] = ['owner', 'administrator'];
const reminderBeforeMs = 3 * 24 * 60 * 60 * 1000;

export interface DisputeMailDeps {
  db: Db;
  logger: FastifyBaseLogger;
  jobs: JobRunner;
  mail: MailTransport;
  members: (merchantId: string) => Promise<ReadonlyArray<{ email: string; role: Role }>>;
  publicUrl: () => string;
}

/** In the transaction that opens the dispute: the e-mail now, the reminder 3 days before dueBy. */
export async function scheduleDisputeMail(jobs: JobRunner, tx: Queryable, row: queries.DisputeRow, now: Date) {
  await jobs.schedule(tx, disputeMailJobs.opened, row.id, now);
  const reminder = new Date(row.due_by.getTime() - reminderBeforeMs);
  if (reminder.getTime() > now.getTime()) await jobs.schedule(tx, disputeMailJobs.reminder, row.id, reminder);
}

export function registerDisputeMail(deps: DisputeMailDeps): void {
  async function send(disputeId: string, reminder: boolean): Promise<void> {
    const row = await queries.selectDisputeById(deps.db, disputeId);
    if (!row) return;
    // A reminder only while the merchant can still respond.
    if (reminder && !disputeStates.canStart('stage', row.status)) return;
    const recipients = (await deps.members(row.merchant_id)).filter((member) => toldRoles.includes(member.role));
    const mode = row.mode === 'live' ? '' : ` (${row.mode} mode)`;
    const amount = `${BigInt(row.amount).toString()} ${row.currency} minor units`;
    const subject = reminder
      ? `Dispute ${row.id} is due in 3 days${mode}`
      : `A payment was disputed${mode}: ${row.reason.replaceAll('_', ' ')}, ${amount}`;
    const text = [
      reminder
        ? `The dispute ${row.id} of payment ${row.payment_id} still awaits your response.`
        : `The cardholder disputed payment ${row.payment_id}: dispute ${row.id}, stage ${row.stage}, reason ${row.reason}, ${amount}.`,
      `Respond with evidence, or accept it, by ${isoTimestamp(row.due_by)}; nothing is taken after that.`,
      `${deps.publicUrl()}/api/services/v1/disputes/${row.id} (POST …/update with evidence; docs/disputes.md)`,
      '',
      'You receive this as an Owner or Administrator of the account.',
    ].join('\n');
    let failures = 0;
    for (const recipient of recipients) {
      try {
        await deps.mail.send({ to: recipient.email, subject, text });
      } catch (err) {
        failures++;
        deps.logger.error({ err, disputeId }, 'dispute e-mail could not be sent');
      }
    }
    // Nobody was reached: the job stays due and is tried again.
    if (recipients.length > 0 && failures === recipients.length) throw new Error('No dispute e-mail could be sent');
  }
  deps.jobs.register(disputeMailJobs.opened, (id) => send(id, false));
  deps.jobs.register(disputeMailJobs.reminder, (id) => send(id, true));
}
