import { Type, type TSchema } from 'typebox';

/** docs/api.md#responses: every response is `{code, msg, data}`; success is `{"code":"success","msg":"success",…}`. */
export function ok<T>(data: T): { code: 'success'; msg: 'success'; data: T } {
  return { code: 'success', msg: 'success', data };
}

export function envelope<T extends TSchema>(data: T) {
  return Type.Object({ code: Type.Literal('success'), msg: Type.Literal('success'), data });
}

export const ErrorEnvelope = Type.Object(
  {
    code: Type.String({ description: 'An error code from the catalog in docs/api.md' }),
    msg: Type.String({ description: 'A sentence for the developer; names the field at fault' }),
    data: Type.Union([
      Type.Null(),
      Type.Object(
        { param: Type.Optional(Type.String()), rule: Type.Optional(Type.String()) },
        { additionalProperties: true },
      ),
    ]),
  },
  { $id: 'ErrorEnvelope' },
);

/** docs/api.md#lists: lists answer `{data: […], hasMore}`, newest first. */
export function listOf<T extends TSchema>(item: T) {
  return envelope(Type.Object({ data: Type.Array(item), hasMore: Type.Boolean() }));
}

export const ListQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  startingAfter: Type.Optional(Type.String({ maxLength: 64 })),
  endingBefore: Type.Optional(Type.String({ maxLength: 64 })),
};
