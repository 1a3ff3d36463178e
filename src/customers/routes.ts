import { envelope, listOf, ok } from '../http/envelope.js';
import { merchantOf, type App } from '../http/server.js';
import {
  CreateCustomerBody,
  Customer,
  CustomerParams,
  DeletedCustomer,
  ListCustomersQuery,
  UpdateCustomerBody,
} from './schemas.js';
import type { CustomerService } from './service.js';

const tags = ['Customers'];

export function customerRoutes(customers: CustomerService) {
  return (app: App) => {
    app.post(
      '/customers/create',
      { schema: { tags, body: CreateCustomerBody, response: { 200: envelope(Customer) } } },
      async (request) => ok(await customers.create(merchantOf(request), request.body)),
    );
    app.get(
      '/customers/:id',
      { schema: { tags, params: CustomerParams, response: { 200: envelope(Customer) } } },
      async (request) => ok(await customers.retrieve(merchantOf(request), request.params.id)),
    );
    app.get(
      '/customers',
      {
        schema: {
          tags,
          description:
            'Newest first. Filters: email, merchantUserId, created[gt|gte|lt|lte] (ISO 8601; created.gte is taken too).',
          querystring: ListCustomersQuery,
          response: { 200: listOf(Customer) },
        },
      },
      async (request) => ok(await customers.list(merchantOf(request), request.query)),
    );
    app.post(
      '/customers/:id/update',
      { schema: { tags, params: CustomerParams, body: UpdateCustomerBody, response: { 200: envelope(Customer) } } },
      async (request) => ok(await customers.update(merchantOf(request), request.params.id, request.body)),
    );
    app.delete(
      '/customers/:id',
      { schema: { tags, params: CustomerParams, response: { 200: envelope(DeletedCustomer) } } },
      async (request) => ok(await customers.delete(merchantOf(request), request.params.id)),
    );
  };
}
