import type { App } from '../http/server.js';
import { can } from '../team/permissions.js';
import { DomainError } from '../core/errors.js';
import type { Queryable } from '../db/db.js';
import { UpdateDisputeBody, type Dispute, type EvidenceFileField } from '../disputes/schemas.js';
import { evidenceFileFields, evidenceTextFields, evidenceTextLimit } from '../disputes/schemas.js';
import { disputeStatuses } from '../disputes/states.js';
import { checkedType, contentTypes, tooLarge } from '../files/service.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, layout, table, when, type FieldErrors } from './layout.js';
import { page, text, type DashboardDeps, type PageContext } from './kit.js';
import { evidenceBodyOf, evidenceForm, evidenceFormScope, fieldLabel } from './dispute-form.js';
import { shownAgain } from './validate.js';
import { cardNumberInFreeText } from '../http/free-text-guard.js';
import { emptyState, moneyCell, moneyText, statusBadge, statusWords, withQuery } from './ui.js';

const base = '/dashboard';
const day = 86_400_000;
const hour = 3_600_000;
/** The most disputes the list shows, soonest due first. */
const shownDisputes = 100;

const awaitingResponse = new Set<string>(['needs_response', 'warning_needs_response']);

/**
 * What is left until a dispute's dueBy (docs/disputes.md, Evidence), written on the server from
 * the service's clock: only while it awaits a response.
 */
export function countdown(dispute: Dispute, now: Date): string {
  if (!awaitingResponse.has(dispute.status)) return '—';
  const left = Date.parse(dispute.evidenceDetails.dueBy) - now.getTime();
  if (dispute.evidenceDetails.pastDue || left <= 0) return 'past due';
  if (left >= day) {
    const days = Math.ceil(left / day);
    return `${days} days left`;
  }
  const hours = Math.ceil(left / hour);
  return hours === 1 ? '1 hour left' : `${hours} hours left`;
}

function disputeRow(dispute: Dispute, now: Date): SafeHtml {
  return html`<tr>
    <td><a href="${base}/disputes/${dispute.id}">${dispute.id}</a></td>
    <td><a href="${base}/payments/${dispute.paymentId}">${dispute.paymentId}</a></td>
    ${moneyCell(dispute.amount, dispute.currency)}
    <td>${statusWords(dispute.reason)}</td>
    <td>${statusWords(dispute.stage)}</td>
    <td>${statusBadge(dispute.status)}</td>
    <td>${countdown(dispute, now)}</td>
    <td>${when(dispute.evidenceDetails.dueBy)}</td>
  </tr>`;
}

/** Disputes as a table, for the list and a payment's page. */
export function disputeTable(disputes: readonly Dispute[], now: Date, empty: string | SafeHtml): SafeHtml {
  const rows = [...disputes]
    .sort((a, b) => Date.parse(a.evidenceDetails.dueBy) - Date.parse(b.evidenceDetails.dueBy))
    .map((dispute) => disputeRow(dispute, now));
  return table(
    ['Dispute', 'Payment', 'Amount', 'Reason', 'Stage', 'Status', 'Time left', 'Due by'],
    rows,
    empty,
    'Disputes',
  );
}

/** A refusal of the disputes or files service, by the field it names (docs/disputes.md, Evidence). */
function refusalOf(err: unknown, fileField?: string): FieldErrors {
  if (!(err instanceof DomainError)) throw err;
  const param = typeof err.details?.param === 'string' ? err.details.param : 'form';
  if (err.code === 'dispute_not_open' || param === 'id') return { form: err.message };
  if (param === 'file' && fileField) return { [fileField]: err.message };
  if (param.startsWith('evidence.')) return { [param.slice('evidence.'.length)]: err.message };
  if (err.kind === 'invalid_request' || err.code === 'resource_missing') return { [param]: err.message };
  throw err;
}

/**
 * Disputes (docs/disputes.md, docs/dashboard.md#pages): the list, soonest due first with the time
 * left; each dispute's page with its money and evidence; Owners and Administrators stage,
 * submit and accept, through the disputes service the API uses.
 */
export function disputePages(app: App, deps: DashboardDeps): void {
  const { disputes, files } = deps;
  if (!disputes || !files) return;

  page(app, deps, 'GET', '/disputes', 'disputes.read', async (ctx) => {
    const query = ctx.request.query as Record<string, string>;
    const status = (disputeStatuses as readonly string[]).includes(query.status ?? '') ? query.status! : '';
    const found = await disputes.listByDueBy(ctx.merchant, {
      limit: shownDisputes,
      ...(status ? { status: status as Dispute['status'] } : {}),
    });
    const now = deps.clock.now();
    const tabs = [['', 'All'], ...disputeStatuses.map((value) => [value, statusWords(value)])] as const;
    return layout(
      { title: 'Disputes', session: ctx.session, current: '/disputes' },
      html`<h1>Disputes</h1>
        <nav class="tabs" aria-label="Disputes by status">
          <ul>
            ${tabs.map(
              ([value, label]) =>
                html`<li>
                  <a
                    href="${withQuery(`${base}/disputes`, value ? { status: value } : {})}"
                    ${value === status ? html`aria-current="page"` : ''}
                    >${label}</a
                  >
                </li>`,
            )}
          </ul>
        </nav>
        ${disputeTable(
          found.data,
          now,
          emptyState({
            title: status ? `No ${statusWords(status).toLowerCase()} disputes` : 'No disputes',
            body: 'A dispute opens when a cardholder disputes a payment with their bank; in the sandbox, pay with a dispute card of docs/disputes.md.',
          }),
        )}
        ${found.hasMore ? html`<p class="muted">The ${shownDisputes} disputes due soonest are shown.</p>` : ''}`,
    );
  });

  async function detailPage(
    ctx: PageContext,
    id: string,
    extra: { values?: Record<string, string>; errors?: FieldErrors; notice?: string } = {},
  ): Promise<SafeHtml> {
    const dispute = await disputes!.retrieve(ctx.merchant, id);
    const now = deps.clock.now();
    const manages = can(ctx.actor.role, 'disputes.manage');
    const open = awaitingResponse.has(dispute.status) && !dispute.evidenceDetails.pastDue;
    const staged = [...evidenceTextFields, ...evidenceFileFields].filter((name) => dispute.evidence[name] !== null);
    return layout(
      { title: `Dispute ${dispute.id}`, session: ctx.session, current: '/disputes', notice: extra.notice },
      html`<p><a href="${base}/disputes">← Disputes</a></p>
        <h1>${moneyText(dispute.amount, dispute.currency)} ${statusBadge(dispute.status)}</h1>
        <dl class="facts card">
          <dt>Id</dt>
          <dd>${dispute.id}</dd>
          <dt>Payment</dt>
          <dd><a href="${base}/payments/${dispute.paymentId}">${dispute.paymentId}</a></dd>
          <dt>Reason</dt>
          <dd>
            ${statusWords(dispute.reason)}${dispute.networkReasonCode ? ` (network code ${dispute.networkReasonCode})` : ''}
          </dd>
          <dt>Stage</dt>
          <dd>${statusWords(dispute.stage)}</dd>
          <dt>Due by</dt>
          <dd>${when(dispute.evidenceDetails.dueBy)} (${countdown(dispute, now)})</dd>
          <dt>Submissions</dt>
          <dd>${String(dispute.evidenceDetails.submissionCount)}</dd>
          <dt>Created</dt>
          <dd>${when(dispute.created)}</dd>
        </dl>
        <h2>Balance transactions</h2>
        ${table(
          ['Type', 'Amount', 'Fee', 'Net', 'Status', 'Created'],
          dispute.balanceTransactions.map(
            (entry) =>
              html`<tr>
                <td>${entry.type}</td>
                ${moneyCell(entry.amount, entry.currency)} ${moneyCell(entry.fee, entry.currency)}
                ${moneyCell(entry.net, entry.currency)}
                <td>${entry.status}</td>
                <td>${when(entry.created)}</td>
              </tr>`,
          ),
          'No money has moved for this dispute (an inquiry withdraws nothing).',
          'Balance transactions',
        )}
        <h2>Staged evidence</h2>
        ${
          staged.length === 0
            ? html`<p class="empty">No evidence staged yet.</p>`
            : html`<dl class="facts card evidence">
                ${staged.map(
                  (name) =>
                    html`<dt>${fieldLabel(name)}</dt>
                      <dd>
                        ${
                          (evidenceFileFields as readonly string[]).includes(name)
                            ? html`<a href="${base}/files/${dispute.evidence[name]}/contents"
                                >${dispute.evidence[name]}</a
                              >`
                            : dispute.evidence[name]
                        }
                      </dd>`,
                )}
              </dl>`
        }
        ${manages && open ? evidenceForm(dispute, ctx.session.csrfToken, extra.values, extra.errors) : ''}
        ${
          manages && open
            ? html`<h2>Accept</h2>
                <form class="card" method="post" action="${base}/disputes/${dispute.id}/accept">
                  ${csrfField(ctx.session.csrfToken)}
                  <p>
                    ${
                      dispute.stage === 'inquiry'
                        ? 'Closes the inquiry without a response.'
                        : 'Gives the dispute up: its amount and fee stay withdrawn.'
                    }
                  </p>
                  <button class="danger" type="submit">Accept dispute</button>
                </form>`
            : ''
        }
        ${manages && !open && extra.errors?.form ? html`<p class="form-error" role="alert">${extra.errors.form}</p>` : ''}`,
    );
  }

  page(app, deps, 'GET', '/disputes/:id', 'disputes.read', (ctx) =>
    detailPage(ctx, (ctx.request.params as { id: string }).id),
  );

  evidenceFormScope(app, (scope) => {
    page(scope, deps, 'POST', '/disputes/:id', 'disputes.manage', async (ctx) => {
      const id = (ctx.request.params as { id: string }).id;
      const { uploads, cut } = evidenceBodyOf(ctx.request);
      // The fields the form sent ("" clears one); a field not sent stays as staged.
      const values = Object.fromEntries(
        evidenceTextFields.filter((name) => name in ctx.form).map((name) => [name, text(ctx.form, name)]),
      );
      let errors: FieldErrors = {};
      for (const name of cut) {
        errors[name] =
          `${fieldLabel(name)} is longer than the ${evidenceTextLimit} characters all text fields may hold`;
      }
      // Every file is checked before any is stored: a refused form stores nothing.
      const chosen = [...uploads].filter(([name]) => (evidenceFileFields as readonly string[]).includes(name));
      for (const [name, upload] of chosen) {
        try {
          if (upload.truncated) throw tooLarge();
          checkedType(upload.bytes);
        } catch (err) {
          errors = { ...errors, ...refusalOf(err, name) };
        }
      }
      const submit = text(ctx.form, 'action') === 'submit';
      if (Object.keys(errors).length === 0) {
        try {
          const stored = chosen.map(([name, upload]) => ({
            field: name as EvidenceFileField,
            store: async (tx: Queryable) =>
              (
                await files.create(
                  ctx.merchant,
                  { purpose: 'dispute_evidence', filename: upload.filename, bytes: upload.bytes },
                  tx,
                )
              ).id,
          }));
          const body: UpdateDisputeBody = { evidence: values, submit };
          // The API's card-number guard on the same schema (docs/decisions/0045-card-numbers-in-free-text.md);
          // the limits are the service's, as through the API.
          const cardNumber = cardNumberInFreeText(UpdateDisputeBody, body);
          if (cardNumber) throw cardNumber;
          const dispute = await disputes.update(ctx.merchant, id, body, stored);
          await deps.team.audit(ctx.actor, submit ? 'dispute.evidence_submitted' : 'dispute.evidence_staged', id);
          return detailPage(ctx, id, {
            notice: submit
              ? `Evidence submitted: the dispute is ${statusWords(dispute.status).toLowerCase()}.`
              : 'Evidence saved.',
          });
        } catch (err) {
          errors = refusalOf(err);
        }
      }
      ctx.reply.code(errors.form ? 409 : 400);
      return detailPage(ctx, id, { values: shownAgain(values), errors });
    });
  });

  page(app, deps, 'POST', '/disputes/:id/accept', 'disputes.manage', async (ctx) => {
    const id = (ctx.request.params as { id: string }).id;
    try {
      const dispute = await disputes.accept(ctx.merchant, id);
      await deps.team.audit(ctx.actor, 'dispute.accepted', id);
      return detailPage(ctx, id, { notice: `Dispute accepted: it is ${statusWords(dispute.status).toLowerCase()}.` });
    } catch (err) {
      const errors = refusalOf(err);
      ctx.reply.code(409);
      return detailPage(ctx, id, { errors });
    }
  });

  /** An evidence file's bytes, to the members who read disputes (docs/disputes.md, Evidence files). */
  page(app, deps, 'GET', '/files/:id/contents', 'disputes.read', async (ctx) => {
    const { file, bytes } = await files.contents(ctx.merchant, (ctx.request.params as { id: string }).id);
    ctx.reply
      .type(contentTypes[file.type])
      .header('content-disposition', `attachment; filename="${file.id}.${file.type}"`)
      .send(bytes);
  });
}
