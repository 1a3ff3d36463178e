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

const RotatedMasterKey = Type.Object({
  masterKeyId: Type.String({
    description: 'A public name of the master key everything is now wrapped under (not the key itself)',
  }),
  rewrapped: Type.Integer({
    description: 'How many data keys (and the derivation seed) were re-wrapped; 0 when all already were',
  }),
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
    app.post(
      '/vault/rotate_master_key',
      {
        schema: {
          tags,
          security,
          description:
            'The second step of a master-key rotation (docs/operations.md): with TESSERA_MASTER_KEY set to the new key and TESSERA_PREVIOUS_MASTER_KEY to the old one on every process, re-wraps every data key and the derivation seed under the new master key. Ciphertexts, card fingerprints, client secrets and invoice links do not change.',
          response: { 200: envelope(RotatedMasterKey) },
        },
      },
      async () => ok(await vault.rotateMasterKey()),
    );
  };
}
