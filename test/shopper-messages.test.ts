/**
 * The shoppers' languages (docs/checkout.md#the-page): every message of the hosted pages and the card field in
 * every language, with the same placeholders; the language chosen from the session's locale, else
 * Accept-Language; amounts written for the shopper; the Pay button readable on any brand colour.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fromAcceptLanguage, shopperLocale, shopperLocales, textDirection } from '../src/shopper/locales.js';
import { browserMessageKeys, catalogs, en, translate, type MessageKey } from '../src/shopper/messages.js';
import { formatMoney } from '../src/shopper/format.js';
import { textOn } from '../src/shopper/page.js';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]).sort();

describe('shopper messages', () => {
  test('every language has every message, none empty, none left in English by mistake, with the same placeholders', () => {
    const keys = Object.keys(en) as MessageKey[];
    assert.ok(shopperLocales.length >= 12);
    for (const locale of shopperLocales) {
      const catalog = catalogs[locale] as Record<string, string>;
      assert.ok(catalog, `no catalog for ${locale}`);
      assert.deepEqual(Object.keys(catalog).sort(), [...keys].sort(), `${locale}: missing or extra keys`);
      for (const key of keys) {
        const text = catalog[key];
        assert.equal(typeof text, 'string', `${locale}.${key}`);
        assert.ok(text!.trim().length > 0, `${locale}.${key} is empty`);
        assert.deepEqual(placeholders(text!), placeholders(en[key]), `${locale}.${key}: placeholders differ`);
      }
      if (locale === 'en') continue;
      // Sentences (not names such as "Total" or "Item") must be translated.
      const same = keys.filter((key) => catalog[key] === en[key] && en[key].split(' ').length > 3);
      assert.deepEqual(same, [], `${locale}: still English`);
    }
  });

  test('no shopper message names an API field or rule', () => {
    for (const locale of shopperLocales) {
      for (const [key, text] of Object.entries(catalogs[locale])) {
        assert.doesNotMatch(text, /card\.\w+|expMonth|cardNo|must be a/i, `${locale}.${key}`);
      }
    }
  });

  test('the card scripts get only known keys', () => {
    for (const key of browserMessageKeys) assert.ok(key in en, key);
  });

  test('the session locale wins over Accept-Language; auto and unknown tags fall back to the browser, then English', () => {
    assert.equal(shopperLocale('de', 'fr-FR,fr;q=0.9'), 'de');
    assert.equal(shopperLocale('auto', 'fr-FR,fr;q=0.9'), 'fr');
    assert.equal(shopperLocale(null, 'pt-BR,pt;q=0.9,en;q=0.5'), 'pt-BR');
    assert.equal(shopperLocale(null, 'pt-PT'), 'pt-BR');
    assert.equal(shopperLocale(null, 'zh-Hans-CN,zh;q=0.9'), 'zh-CN');
    assert.equal(shopperLocale(null, 'zh-TW'), 'en');
    assert.equal(shopperLocale(null, 'sv-SE,de;q=0.3,nl;q=0.8'), 'nl');
    assert.equal(shopperLocale(null, 'ja;q=0'), 'en');
    assert.equal(shopperLocale(undefined, undefined), 'en');
    assert.equal(fromAcceptLanguage('*'), undefined);
    assert.equal(textDirection('ar'), 'rtl');
    assert.equal(textDirection('de'), 'ltr');
  });

  test('amounts are written in the shopper’s language, every minor unit kept', () => {
    assert.equal(formatMoney('en', 3150n, 'USD'), '$31.50');
    assert.equal(formatMoney('de', 123450n, 'EUR'), '1.234,50\u00a0€');
    assert.equal(formatMoney('ja', 3150n, 'JPY'), '￥3,150');
    assert.equal(formatMoney('en', 999999999999n, 'USD'), '$9,999,999,999.99');
    assert.equal(translate('fr', 'pay', { amount: formatMoney('fr', 3150n, 'EUR') }), 'Payer 31,50\u00a0€');
  });

  test('the Pay button text contrasts at least 4.5:1 with any brand colour', () => {
    const luminance = (hex: string) => {
      const channel = (offset: number) => {
        const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
        return value <= 0.04045 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
      };
      return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    };
    for (const color of ['#000000', '#ffffff', '#777777', '#1f5fbf', '#ffcc00', '#7f7f7f', '#e11d48', '#00ff00']) {
      const [a, b] = [luminance(color), luminance(textOn(color))].sort((x, y) => y - x);
      assert.ok((a! + 0.05) / (b! + 0.05) >= 4.5, color);
    }
  });
});
