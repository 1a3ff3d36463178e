import { Type } from 'typebox';
import { envelope, ok } from '../http/envelope.js';
import type { App } from '../http/server.js';
import type { Vault } from './vault.js';

const tags = ['Operator'];
const security = [{ operatorKey: [] }];

const RotatedKey = Type.Object({
  activeKeyId: Type.String({ description: 'The data-encryption key that encrypts from now on' }),
  reencrypted: Type.Integer({ description: 'How many stored ciphertexts were re-encrypted with it' }),
});

/** The operator API of the card vault: key rotation. No route ever answers card data. */
export function vaultRoutes(vault: Vault) {
  return (app: App) => {
    app.post(
      '/vault/rotate_key',
      {
        schema: {
          tags,
          security,
          description:
            'Makes a new data-encryption key active and re-encrypts every secret at rest with it: cards, network tokens, webhook endpoint tokens, legacy signing keys, TOTP secrets and stored Idempotency-Key answers.',
          response: { 200: envelope(RotatedKey) },
        },
      },
      async () => ok(await vault.rotateKey()),
    );
  };
}
