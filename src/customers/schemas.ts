import { Type, type Static } from 'typebox';
import { ListQuery } from '../http/envelope.js';
import {
  Address,
  AddressOut,
  CreatedFilters,
  Email,
  Nullable,
  notFreeText,
  PersonName,
  Phone,
  Shipping,
  ShippingOut,
  Timestamp,
} from '../core/common-schemas.js';

const customerFields = {
  address: Type.Optional(Address),
  description: Type.Optional(Type.String({ maxLength: 500, description: 'May be empty' })),
  email: Type.Optional(Email),
  firstName: Type.Optional(PersonName),
  lastName: Type.Optional(PersonName),
  phone: Type.Optional(Phone),
  shipping: Type.Optional(Shipping),
  merchantUserId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      description:
        "The id of the user on the merchant's own site (docs/api.md#customers); unique per merchant. Your own identifier: not checked for card numbers",
      ...notFreeText,
    }),
  ),
};

// docs/api.md#customers leaves required fields open; like Stripe, every field is optional.
export const CreateCustomerBody = Type.Object(customerFields, { additionalProperties: false });
export type CreateCustomerBody = Static<typeof CreateCustomerBody>;

export const UpdateCustomerBody = Type.Object(customerFields, { additionalProperties: false });
export type UpdateCustomerBody = Static<typeof UpdateCustomerBody>;

export const CustomerParams = Type.Object({ id: Type.String({ maxLength: 64 }) });

export const ListCustomersQuery = Type.Object(
  {
    ...ListQuery,
    email: Type.Optional(Type.String({ maxLength: 254 })),
    merchantUserId: Type.Optional(Type.String({ maxLength: 128 })),
    ...CreatedFilters,
  },
  { additionalProperties: false },
);
export type ListCustomersQuery = Static<typeof ListCustomersQuery>;

export const Customer = Type.Object(
  {
    id: Type.String({ pattern: '^cus_\\d{19}$' }),
    address: Nullable(AddressOut),
    description: Nullable(Type.String()),
    email: Nullable(Type.String()),
    firstName: Nullable(Type.String()),
    lastName: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    shipping: Nullable(ShippingOut),
    merchantUserId: Nullable(Type.String()),
    created: Timestamp,
  },
  { $id: 'Customer' },
);
export type Customer = Static<typeof Customer>;

export const DeletedCustomer = Type.Object({ id: Type.String(), deleted: Type.Boolean() });
