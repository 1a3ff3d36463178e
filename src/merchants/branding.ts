/**
 * The merchant's branding of its hosted pages (issue 22): a colour and a logo. Both end up in
 * pages and in a Content-Security-Policy (img-src), so each is held to a narrow form: a colour is
 * exactly `#rrggbb`, a logo an https URL without credentials.
 */
import { invalidField } from '../core/errors.js';

const colorForm = /^#[0-9a-fA-F]{6}$/;

/** The colour in lower case, null (`""` in the API: a JSON null means "not given") to remove it; a 400 naming `brandColor` otherwise. */
export function checkBrandColor(value: string | null): string | null {
  if (value === null || value === '') return null;
  if (!colorForm.test(value)) {
    throw invalidField('brandColor', 'brandColor must be a colour written #rrggbb, such as #1f5fbf', 'format');
  }
  return value.toLowerCase();
}

/** The logo's URL, null (or `""`) to remove it; a 400 naming `logoUrl` otherwise. */
export function checkLogoUrl(value: string | null): string | null {
  if (value === null || value === '') return null;
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || url.protocol !== 'https:' || url.username || url.password || /[\s"'<>]/.test(value)) {
    throw invalidField(
      'logoUrl',
      'logoUrl must be an https URL of an image, such as https://shop.example/logo.png',
      'format',
    );
  }
  return url.toString();
}
