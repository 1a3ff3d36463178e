import { Type, type Static } from 'typebox';

/*
 * docs/webhooks.md#sending-addresses-allow-lists: the addresses a merchant's allow-list should let in. They are the
 * operator's word (TESSERA_WEBHOOK_SENDING_ADDRESSES: the proxy's or the hosts' public
 * addresses), shown the same way by the API, the dashboard and the go-live check.
 */

export const SendingAddresses = Type.Object(
  {
    object: Type.Literal('sending_addresses'),
    fixed: Type.Boolean({
      description: 'true when the operator has fixed the addresses webhooks are sent from; false: they are not fixed',
    }),
    addresses: Type.Array(Type.String(), {
      description: 'IP addresses and CIDR ranges webhooks come from (empty when not fixed)',
    }),
    message: Type.String({ description: 'What a merchant with an IP allow-list should do, as a sentence' }),
  },
  { $id: 'SendingAddresses' },
);
export type SendingAddresses = Static<typeof SendingAddresses>;

export const notFixedMessage =
  'The addresses webhooks are sent from are not fixed on this Tessera: do not rely on an IP allow-list; ' +
  'verify each webhook by its signature instead.';

export function sendingAddressesView(addresses: readonly string[]): SendingAddresses {
  if (addresses.length === 0)
    return { object: 'sending_addresses', fixed: false, addresses: [], message: notFixedMessage };
  return {
    object: 'sending_addresses',
    fixed: true,
    addresses: [...addresses],
    message:
      'Webhooks are sent only from these addresses: allow them in your firewall, and still verify each webhook by its signature.',
  };
}
