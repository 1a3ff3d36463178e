import { Type } from 'typebox';
import { envelope, ok } from '../http/envelope.js';
import type { App } from '../http/server.js';
import { invalidField } from '../core/errors.js';
import {
  CreateMerchantBody,
  Merchant,
  MerchantParams,
  MerchantWithKeys,
  RollKeysBody,
  UpdateMerchantBody,
} from './schemas.js';
import type { MerchantService } from './service.js';
import type { Queryable } from '../db/db.js';

/** Makes a merchant's first dashboard Owner (the team service), in the merchant's transaction. */
export type AddOwner = (tx: Queryable, merchantId: string, email: string) => Promise<{ link: string }>;

const tags = ['Operator'];
const security = [{ operatorKey: [] }];

/** The operator ("account manager") API: merchants, their capability flags and keys (docs/api.md#tokenization-rules). */
export function merchantRoutes(
  merchants: MerchantService,
  addOwner?: AddOwner,
  /** Whether the merchant has an enabled live processor account (live keys need one). */
  liveAllowed: (merchantId: string) => Promise<boolean> = async () => false,
) {
  return (app: App) => {
    app.post(
      '/merchants/create',
      { schema: { tags, security, body: CreateMerchantBody, response: { 200: envelope(MerchantWithKeys) } } },
      async (request) => ok(await merchants.create(request.body, addOwner)),
    );
    app.get(
      '/merchants',
      {
        schema: {
          tags,
          security,
          response: { 200: envelope(Type.Object({ data: Type.Array(Merchant), hasMore: Type.Boolean() })) },
        },
      },
      async () => ok({ data: await merchants.list(), hasMore: false }),
    );
    app.get(
      '/merchants/:id',
      { schema: { tags, security, params: MerchantParams, response: { 200: envelope(Merchant) } } },
      async (request) => ok(await merchants.retrieve(request.params.id)),
    );
    app.post(
      '/merchants/:id/update',
      {
        schema: {
          tags,
          security,
          params: MerchantParams,
          body: UpdateMerchantBody,
          response: { 200: envelope(Merchant) },
        },
      },
      async (request) => ok(await merchants.update(request.params.id, request.body)),
    );
    app.post(
      '/merchants/:id/roll_keys',
      {
        schema: {
          tags,
          security,
          params: MerchantParams,
          body: RollKeysBody,
          response: { 200: envelope(MerchantWithKeys) },
        },
      },
      async (request, reply) => {
        const mode = request.body?.mode ?? 'test';
        if (mode !== 'test' && mode !== 'live') throw invalidField('mode', 'mode must be test or live', 'enum');
        void reply.header('cache-control', 'no-store');
        return ok(await merchants.rollKeys(request.params.id, mode, () => liveAllowed(request.params.id)));
      },
    );
  };
}
