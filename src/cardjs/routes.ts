/**
 * Browser card collection (issue 14, docs/checkout.md#browser-card-collection-tesserajs): `/js/v1/tessera.js`, the script a merchant's page
 * loads, and the card frame it mounts (`/js/v1/card-frame`), with the frame's own script and style.
 * Served outside the key-authenticated API: the page names its public key in the frame's address.
 */
import { readFileSync } from 'node:fs';
import type { FastifyReply } from 'fastify';
import type { App } from '../http/server.js';
import type { MerchantService } from '../merchants/service.js';
import { isOrigin } from '../merchants/origins.js';
import { normalizeCurrency, parseAmount } from '../money.js';
import { shopperLocale, type ShopperLocale } from '../shopper/locales.js';
import { translate } from '../shopper/messages.js';
import { formatMoney } from '../shopper/format.js';
import {
  cardFrameHeaders,
  renderCardFrame,
  renderRefusedFrame,
  type FrameAncestors,
} from '../shopper/card-frame-page.js';
import { hashKey, type KeyLookup } from '../core/merchant-context.js';

export interface CardJsDeps {
  keys: KeyLookup;
  merchants: MerchantService;
  /** Outside production, a test key's frame may be framed by any page while no origin is registered. */
  production: boolean;
}

/** The files, read once: src/cardjs/static/ (copied beside the compiled code by the build). */
function staticFile(name: string): string {
  return readFileSync(new URL(`./static/${name}`, import.meta.url), 'utf8');
}

const scriptHeaders = {
  'cache-control': 'public, max-age=300',
  'x-content-type-options': 'nosniff',
  // Any page may load tessera.js, with or without `crossorigin` (for Subresource Integrity).
  'access-control-allow-origin': '*',
  'cross-origin-resource-policy': 'cross-origin',
};
const frameAssetHeaders = { 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' };

const publicKeyForm = /^(test|live)_pu_[A-Za-z0-9]{32,64}$/;
const frameIdForm = /^[A-Za-z0-9_-]{1,64}$/;

const text = (value: unknown): string => (typeof value === 'string' ? value : '');

export function cardJsRoutes(deps: CardJsDeps) {
  const files = {
    script: staticFile('tessera.js'),
    frameScript: staticFile('card-frame.js'),
    frameStyle: staticFile('card-frame.css'),
    cardInput: staticFile('card-input.js'),
    hostedForm: staticFile('hosted-form.js'),
  };

  /** The merchant's website origins; with none registered, any page outside production (test keys). */
  async function ancestorsOf(merchantId: string, mode: 'test' | 'live'): Promise<FrameAncestors> {
    const { websiteOrigins } = await deps.merchants.retrieve(merchantId);
    if (websiteOrigins.length === 0 && !deps.production && mode === 'test') return { any: true };
    return { any: false, origins: websiteOrigins };
  }

  const refused = (reply: FastifyReply, status: number, ancestors: FrameAncestors, message: string) => {
    const page = renderRefusedFrame(message);
    return reply.code(status).headers(cardFrameHeaders(page, ancestors)).send(page.text);
  };

  return (app: App) => {
    app.get('/js/v1/tessera.js', { schema: { hide: true } }, async (_request, reply) =>
      reply.headers(scriptHeaders).type('text/javascript; charset=utf-8').send(files.script),
    );
    app.get('/js/v1/card-frame.js', { schema: { hide: true } }, async (_request, reply) =>
      reply.headers(frameAssetHeaders).type('text/javascript; charset=utf-8').send(files.frameScript),
    );
    // The card checks as typed, shared by the card frame and the hosted checkout and invoice pages.
    app.get('/js/v1/card-input.js', { schema: { hide: true } }, async (_request, reply) =>
      reply.headers(frameAssetHeaders).type('text/javascript; charset=utf-8').send(files.cardInput),
    );
    app.get('/js/v1/hosted-form.js', { schema: { hide: true } }, async (_request, reply) =>
      reply.headers(frameAssetHeaders).type('text/javascript; charset=utf-8').send(files.hostedForm),
    );
    app.get('/js/v1/card-frame.css', { schema: { hide: true } }, async (_request, reply) =>
      reply.headers(frameAssetHeaders).type('text/css; charset=utf-8').send(files.frameStyle),
    );

    app.get('/js/v1/card-frame', { schema: { hide: true } }, async (request, reply) => {
      const query = (request.query ?? {}) as Record<string, unknown>;
      const key = text(query.key);
      const parentOrigin = text(query.origin);
      const frameId = text(query.id);
      const nobody: FrameAncestors = { any: false, origins: [] };
      const merchant = publicKeyForm.test(key) ? await deps.keys.findMerchantByKeyHash(hashKey(key)) : null;
      // A private key in a page is a leak: it is refused as any unknown key, and never echoed.
      if (!merchant || merchant.keyKind !== 'public')
        return refused(reply, 400, nobody, 'The card field needs a valid public key (test_pu_…).');
      const ancestors = await ancestorsOf(merchant.merchantId, merchant.mode);
      if (!frameIdForm.test(frameId))
        return refused(reply, 400, ancestors, 'The card field was not mounted by tessera.js.');
      const allowed = ancestors.any || ancestors.origins.includes(parentOrigin);
      if (!isOrigin(parentOrigin) || !allowed)
        return refused(
          reply,
          403,
          ancestors,
          "This page's origin is not one of the merchant's website origins (dashboard → Settings).",
        );
      // tessera.js's locale (Tessera(key, { locale }) or mountCard), else the shopper's browser.
      const locale = shopperLocale(text(query.locale), request.headers['accept-language']);
      const pay = payLabelOf(locale, text(query.amount), text(query.currency));
      if ('refused' in pay) return refused(reply, 400, ancestors, pay.refused);
      const page = renderCardFrame({ locale, publicKey: key, parentOrigin, frameId, payLabel: pay.label });
      return reply.headers(cardFrameHeaders(page, ancestors)).send(page.text);
    });
  };
}

/**
 * mountCard's `amount` (minor units, as the API takes it) and `currency`: the Pay button's label in
 * the shopper's language ("Pay $25.00", "25,00 € bezahlen"), which tessera.js writes on the page's
 * button. Neither given: no label. Refused naming the field and the rule otherwise.
 */
function payLabelOf(
  locale: ShopperLocale,
  amount: string,
  currency: string,
): { label: string | undefined } | { refused: string } {
  if (amount === '' && currency === '') return { label: undefined };
  const minor = parseAmount(amount);
  if (minor === undefined) {
    return { refused: 'mountCard: amount must be a whole number of minor units, e.g. "2500" for 25.00 USD.' };
  }
  const code = normalizeCurrency(currency);
  if (code === undefined)
    return { refused: 'mountCard: currency must be an ISO 4217 code, e.g. "USD", beside amount.' };
  return { label: translate(locale, 'pay', { amount: formatMoney(locale, minor, code) }) };
}
