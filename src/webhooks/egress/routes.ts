import { Type } from 'typebox';
import { envelope, ok } from '../../http/envelope.js';
import type { App } from '../../http/server.js';
import { SendingAddresses, sendingAddressesView } from './sending-addresses.js';

/** GET /webhook_endpoints/sending_addresses (docs/webhooks.md#sending-addresses-allow-lists): private key, like the endpoints themselves. */
export function sendingAddressRoutes(sendingAddresses: readonly string[]) {
  const view = sendingAddressesView(sendingAddresses);
  return (app: App) => {
    app.get(
      '/webhook_endpoints/sending_addresses',
      {
        schema: {
          tags: ['Webhook endpoints'],
          summary: 'Retrieve the sending addresses',
          description:
            'The addresses webhook deliveries come from, for a firewall allow-list (docs/webhooks.md#sending-addresses-allow-lists). ' +
            '`fixed: false` means the operator has not fixed them: verify signatures instead of allow-listing.',
          // No parameters: an unknown one is refused, as everywhere (docs/api.md#requests).
          querystring: Type.Object({}, { additionalProperties: false }),
          response: { 200: envelope(SendingAddresses) },
        },
      },
      async () => ok(view),
    );
  };
}
