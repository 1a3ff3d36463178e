import type { SendingAddresses } from '../webhooks/egress/sending-addresses.js';
import { html, type SafeHtml } from '../web/html.js';

/** docs/webhooks.md#sending-addresses-allow-lists: the addresses webhooks come from, for a merchant's firewall allow-list. */
export function sendingAddressesSection(view: SendingAddresses): SafeHtml {
  return html`<div class="card" role="region" aria-labelledby="sending-addresses">
    <h2 id="sending-addresses">Sending addresses</h2>
    ${
      view.fixed
        ? html`<ul class="addresses">
            ${view.addresses.map((address) => html`<li><code>${address}</code></li>`)}
          </ul>`
        : ''
    }
    <p class="hint">${view.message}</p>
  </div>`;
}
