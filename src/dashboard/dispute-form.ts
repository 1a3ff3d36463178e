/**
 * The dispute page's evidence form (docs/disputes.md, Evidence): its text and file fields, and
 * the reading of its multipart body. Multipart is registered in this scope only, with the limits
 * of POST /files (src/files/routes.ts); the fields become the request's body before the dashboard's
 * CSRF check reads it, and the files wait beside it until the page has checked them all.
 */
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/server.js';
import { evidenceFileFields, evidenceTextFields, evidenceTextLimit, type Dispute } from '../disputes/schemas.js';
import { maxFileBytes } from '../files/schemas.js';
import { html, type SafeHtml } from '../web/html.js';
import { csrfField, field, formError, type FieldErrors } from './layout.js';

export interface Upload {
  filename: string;
  bytes: Buffer;
  /** Longer than 5 MB: only the first 5 MB were read. */
  truncated: boolean;
}

interface EvidenceBody {
  uploads: Map<string, Upload>;
  /** Text fields longer than the whole text limit can be (cut short while read). */
  cut: Set<string>;
}

const bodies = new WeakMap<FastifyRequest, EvidenceBody>();

/** A UTF-8 character takes at most 4 bytes: a field cut at this size held more than the limit. */
const fieldBytes = evidenceTextLimit * 4;

const shortFields = new Set<string>([
  'customerName',
  'customerEmailAddress',
  'shippingCarrier',
  'shippingTrackingNumber',
  'shippingDate',
]);

/** `productDescription` → "Product description". */
export function fieldLabel(name: string): string {
  const words = name.replace(/([A-Z])/g, ' $1').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Registers, in a scope of its own, the routes that take an evidence form. */
export function evidenceFormScope(app: App, register: (scope: App) => void): void {
  void app.register(async (scope) => {
    await scope.register(multipart, {
      throwFileSizeLimit: false,
      limits: {
        fileSize: maxFileBytes,
        files: evidenceFileFields.length,
        fields: evidenceTextFields.length + 4,
        fieldSize: fieldBytes,
        parts: evidenceTextFields.length + evidenceFileFields.length + 4,
      },
    });
    scope.addHook('preValidation', async (request) => {
      if (!request.isMultipart()) return;
      const form: Record<string, string> = {};
      const body: EvidenceBody = { uploads: new Map(), cut: new Set() };
      for await (const part of request.parts()) {
        if (part.type === 'field') {
          if (part.valueTruncated) body.cut.add(part.fieldname);
          form[part.fieldname] = String(part.value);
          continue;
        }
        const bytes = await part.toBuffer();
        // A file input left empty is sent as a part without a name or bytes.
        if (part.filename === '' && bytes.length === 0) continue;
        body.uploads.set(part.fieldname, { filename: part.filename, bytes, truncated: part.file.truncated });
      }
      request.body = form;
      bodies.set(request, body);
    });
    register(scope as unknown as App);
  });
}

export function evidenceBodyOf(request: FastifyRequest): EvidenceBody {
  return bodies.get(request) ?? { uploads: new Map(), cut: new Set() };
}

function textArea(name: string, value: string, errors: FieldErrors | undefined): SafeHtml {
  const error = errors?.[name];
  const id = `f-${name}`;
  return html`<div class="field">
    <label for="${id}">${fieldLabel(name)}</label>
    <textarea
      id="${id}"
      name="${name}"
      rows="3"
      cols="60"
      ${error ? html`aria-invalid="true" aria-describedby="${id}-error"` : ''}
    >
${value}</textarea>
    ${error ? html`<span class="error" id="${id}-error">${error}</span>` : ''}
  </div>`;
}

function fileInput(name: string, staged: string | null, errors: FieldErrors | undefined): SafeHtml {
  const error = errors?.[name];
  const id = `f-${name}`;
  return html`<div class="field">
    <label for="${id}">${fieldLabel(name)}</label>
    <span class="hint" id="${id}-hint"
      >${
        staged
          ? html`Staged: <a href="/dashboard/files/${staged}/contents">${staged}</a>. A new file replaces it.`
          : 'PDF, PNG or JPEG, at most 5 MB.'
      }</span
    >
    <input
      id="${id}"
      name="${name}"
      type="file"
      accept="application/pdf,image/png,image/jpeg"
      aria-describedby="${id}-hint${error ? ` ${id}-error` : ''}"
      ${error ? html`aria-invalid="true"` : ''}
    />
    ${error ? html`<span class="error" id="${id}-error">${error}</span>` : ''}
  </div>`;
}

/** The form of a dispute that takes a response: staged values (or the ones refused) and Save / Submit. */
export function evidenceForm(
  dispute: Dispute,
  csrfToken: string,
  values: Record<string, string> | undefined,
  errors: FieldErrors | undefined,
): SafeHtml {
  const valueOf = (name: (typeof evidenceTextFields)[number]) => values?.[name] ?? dispute.evidence[name] ?? '';
  return html`<h2>Evidence</h2>
    <form
      class="card"
      method="post"
      action="/dashboard/disputes/${dispute.id}"
      enctype="multipart/form-data"
      novalidate
    >
      ${csrfField(csrfToken)} ${formError(errors)}
      ${errors?.evidence ? html`<p class="form-error" role="alert">${errors.evidence}</p>` : ''}
      <p class="hint">
        Text fields hold ${evidenceTextLimit.toLocaleString('en')} characters in all; an empty field clears what was
        staged.
      </p>
      ${evidenceTextFields.map((name) =>
        shortFields.has(name)
          ? field({ name, label: fieldLabel(name), value: valueOf(name), errors })
          : textArea(name, valueOf(name), errors),
      )}
      ${evidenceFileFields.map((name) => fileInput(name, dispute.evidence[name], errors))}
      <button type="submit" name="action" value="save">Save</button>
      <button type="submit" name="action" value="submit">Submit evidence</button>
    </form>`;
}
