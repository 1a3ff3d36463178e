/**
 * The card form of the hosted pages (checkout and invoice): the same fields, the same checks and
 * the same shopper-facing messages on both. The server checks every post (the page works without
 * script); src/cardjs/static/hosted-form.js checks the same as the shopper types. The card number
 * and security code are never written into a page, not even after a refused form.
 */
import { containsCardNumber } from '../card-numbers.js';
import type { DomainError } from '../core/errors.js';
import { html, type SafeHtml } from '../web/html.js';
import type { ShopperLocale } from './locales.js';
import { browserMessages, translate, type MessageKey } from './messages.js';

export type CardField = 'cardNo' | 'expiry' | 'securityCode' | 'name';

/** A refused form: a message per field, and what may be shown again (never the number or code). */
export interface CardFormState {
  errors: Partial<Record<CardField | 'form', MessageKey>>;
  expiry?: string;
  name?: string;
}

export interface CardForm {
  cardNo: string;
  expMonth: string;
  expYear: string;
  securityCode: string;
  firstName: string;
  lastName: string | undefined;
}

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function passesLuhn(number: string): boolean {
  let sum = 0;
  for (let index = 0; index < number.length; index += 1) {
    let digit = Number(number.charAt(number.length - 1 - index));
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

function numberError(cardNo: string): MessageKey | undefined {
  if (cardNo === '') return 'cardNumberMissing';
  if (!/^\d+$/.test(cardNo)) return 'cardNumberInvalid';
  if (cardNo.length < 12) return 'cardNumberIncomplete';
  if (cardNo.length > 19 || !passesLuhn(cardNo)) return 'cardNumberInvalid';
  return undefined;
}

function expiryError(expiry: string): MessageKey | undefined {
  if (expiry === '') return 'expiryMissing';
  const parts = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(expiry);
  if (!parts) return 'expiryIncomplete';
  const month = Number(parts[1]);
  return month < 1 || month > 12 ? 'expiryMonthInvalid' : undefined;
}

/** The form as typed by a person: spaces in the number, MM/YY or MM/YYYY; each problem named by field. */
export function readCardForm(form: Record<string, unknown>): { card: CardForm } | { state: CardFormState } {
  const cardNo = text(form.cardNo).replace(/[\s-]/g, '');
  const expiry = text(form.expiry).trim();
  const securityCode = text(form.securityCode).trim();
  const name = text(form.name).trim().replace(/\s+/g, ' ');
  const errors: CardFormState['errors'] = {};
  const cardNoError = numberError(cardNo);
  if (cardNoError) errors.cardNo = cardNoError;
  const expiryProblem = expiryError(expiry);
  if (expiryProblem) errors.expiry = expiryProblem;
  if (securityCode === '') errors.securityCode = 'securityCodeMissing';
  else if (!/^\d{3,4}$/.test(securityCode)) errors.securityCode = 'securityCodeIncomplete';
  // A card number typed into the name is neither kept nor shown again
  // (docs/decisions/0045-card-numbers-in-free-text.md).
  const nameHoldsCardNumber = containsCardNumber(name);
  if (name.length === 0 || name.length > 200 || nameHoldsCardNumber) errors.name = 'nameMissing';
  const parts = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(expiry);
  // Only what is not secret is shown again.
  if (Object.keys(errors).length > 0 || !parts) {
    return { state: { errors, expiry: expiry.slice(0, 7), name: nameHoldsCardNumber ? '' : name } };
  }
  const words = name.split(' ');
  const lastName = words.length > 1 ? words.pop() : undefined;
  return {
    card: {
      cardNo,
      expMonth: parts[1]!.padStart(2, '0'),
      expYear: parts[2]!.length === 2 ? `20${parts[2]}` : parts[2]!,
      securityCode,
      firstName: words.join(' ').slice(0, 100),
      lastName: lastName?.slice(0, 100),
    },
  };
}

/** The vault's refusal of a card (by the field it names) as the message beside that field. */
export function cardRefusal(err: DomainError): { field: CardField; message: MessageKey } | null {
  const param = err.details?.param ?? '';
  if (param === 'card.cardNo') {
    return { field: 'cardNo', message: /brand/i.test(err.message) ? 'cardBrandUnsupported' : 'cardNumberInvalid' };
  }
  if (param === 'card.expMonth' || param === 'card.expYear') return { field: 'expiry', message: 'expiryPast' };
  if (param === 'card.securityCode') return { field: 'securityCode', message: 'securityCodeIncomplete' };
  return null;
}

export interface CardFormView {
  locale: ShopperLocale;
  action: string;
  /** Fields posted along (the invoice page's token). */
  hidden?: Record<string, string>;
  /** The button's words, with the amount: "Pay $31.50". */
  payLabel: string;
  state?: CardFormState | undefined;
}

/**
 * Each field's message sits in a live region that is always there, so that a message the script
 * writes while the shopper types is read out (aria-live), and one the server wrote is tied to its
 * field (aria-describedby) and focused first (autofocus).
 */
export function renderCardForm(view: CardFormView): SafeHtml {
  const { locale, state } = view;
  const t = (key: MessageKey) => translate(locale, key);
  const firstWrong = (['cardNo', 'expiry', 'securityCode', 'name'] as const).find((field) => state?.errors[field]);
  const field = (name: CardField, extraDescribedBy = '') => {
    const message = state?.errors[name];
    return {
      attributes: html`id="${name}" name="${name}"
      aria-describedby="${extraDescribedBy}${name}-live"${
        message ? html` aria-invalid="true"` : ''
      }${firstWrong === name ? html` autofocus` : ''}`,
      // Written on one line: the region must stay :empty (hidden) while it holds no message.
      // prettier-ignore
      error: html`<div class="field-error" id="${name}-live" aria-live="polite">${message ? html`<p class="error" id="${name}-error">${t(message)}</p>` : ''}</div>`,
    };
  };
  const cardNo = field('cardNo');
  const expiry = field('expiry');
  const securityCode = field('securityCode', 'securityCode-hint ');
  const name = field('name');
  const hidden = Object.entries(view.hidden ?? {}).map(
    ([key, value]) => html`<input type="hidden" name="${key}" value="${value}" />`,
  );
  const formError = state?.errors.form
    ? html`<p class="error" id="form-error" role="alert">${t(state.errors.form)}</p>`
    : '';
  const messages = JSON.stringify(browserMessages(locale));
  return html`${formError}
    <form method="post" action="${view.action}" autocomplete="on" data-card-form data-messages="${messages}">
      ${hidden}
      <div class="field">
        <label for="cardNo">${t('cardNumber')}</label>
        <div class="number">
          <input
            ${cardNo.attributes}
            type="text"
            inputmode="numeric"
            autocomplete="cc-number"
            maxlength="23"
            spellcheck="false"
            required
          />
          <span class="brand" id="card-brand" aria-live="polite" data-label="${t('cardBrand')}"></span>
        </div>
        ${cardNo.error}
      </div>
      <div class="row">
        <div class="field">
          <label for="expiry">${t('expiry')}</label>
          <input
            ${expiry.attributes}
            type="text"
            inputmode="numeric"
            autocomplete="cc-exp"
            maxlength="7"
            placeholder="${t('expiryPlaceholder')}"
            required
            value="${state?.expiry ?? ''}"
          />
          ${expiry.error}
        </div>
        <div class="field">
          <label for="securityCode">${t('securityCode')}</label>
          <input
            ${securityCode.attributes}
            type="text"
            inputmode="numeric"
            autocomplete="cc-csc"
            maxlength="4"
            required
          />
          <span class="hint" id="securityCode-hint">${t('securityCodeHint')}</span>
          ${securityCode.error}
        </div>
      </div>
      <div class="field">
        <label for="name">${t('nameOnCard')}</label>
        <input
          ${name.attributes}
          type="text"
          autocomplete="cc-name"
          maxlength="100"
          required
          value="${state?.name ?? ''}"
        />
        ${name.error}
      </div>
      <button type="submit" id="pay">${view.payLabel}</button>
    </form>`;
}
