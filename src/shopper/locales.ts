/**
 * The shoppers' languages (docs/checkout.md#the-page): the hosted checkout and invoice pages and the card field of
 * tessera.js speak the session's `locale`, else the browser's Accept-Language, else English.
 */

export const shopperLocales = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt-BR', 'ja', 'zh-CN', 'ko', 'pl', 'ar'] as const;
export type ShopperLocale = (typeof shopperLocales)[number];

/** What a session or tessera.js may ask for: a language above, or `auto` (the browser's). */
export const requestableLocales = ['auto', ...shopperLocales] as const;

const rightToLeft: ReadonlySet<ShopperLocale> = new Set(['ar']);

export function textDirection(locale: ShopperLocale): 'rtl' | 'ltr' {
  return rightToLeft.has(locale) ? 'rtl' : 'ltr';
}

/**
 * A language tag as browsers and shops write it (`pt-br`, `de-AT`, `zh-Hans-CN`), as one of ours:
 * the exact tag first, then its language alone (`de-AT` → `de`, `pt-PT` → `pt-BR`). Traditional
 * Chinese is not offered as Simplified: a Taiwanese shopper reads English sooner than a wrong script.
 */
export function matchLocale(tag: string): ShopperLocale | undefined {
  const lower = tag.trim().toLowerCase();
  if (lower === '') return undefined;
  const exact = shopperLocales.find((locale) => locale.toLowerCase() === lower);
  if (exact) return exact;
  const [language, ...rest] = lower.split(/[-_]/);
  if (language === 'zh') {
    const traditional = rest.some((part) => ['hant', 'tw', 'hk', 'mo'].includes(part));
    return traditional ? undefined : 'zh-CN';
  }
  if (language === 'pt') return 'pt-BR';
  return shopperLocales.find((locale) => locale === language);
}

/** Accept-Language (RFC 9110 §12.5.4): the preferred language we speak, by quality then order. */
export function fromAcceptLanguage(header: string | undefined): ShopperLocale | undefined {
  if (!header) return undefined;
  const ranges = header
    .slice(0, 1000)
    .split(',')
    .map((part, index) => {
      const [tag = '', ...params] = part.split(';');
      const quality = params.map((param) => /^\s*q\s*=\s*([01](\.\d{0,3})?)\s*$/.exec(param)).find(Boolean);
      return { tag: tag.trim(), quality: quality ? Number(quality[1]) : 1, index };
    })
    .filter((range) => range.quality > 0 && range.tag !== '*')
    .sort((a, b) => b.quality - a.quality || a.index - b.index);
  for (const range of ranges) {
    const locale = matchLocale(range.tag);
    if (locale) return locale;
  }
  return undefined;
}

/** The page's language: the one asked for (unless `auto` or unknown), else the browser's, else English. */
export function shopperLocale(requested: string | null | undefined, acceptLanguage: string | undefined): ShopperLocale {
  const asked = requested && requested !== 'auto' ? matchLocale(requested) : undefined;
  return asked ?? fromAcceptLanguage(acceptLanguage) ?? 'en';
}
