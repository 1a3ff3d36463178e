/**
 * Errors that teach (issue 21, docs/api.md#the-api-reference): a misspelt field is named with the field it was meant
 * to be, also when that field is required and so reported missing; a JSON body sent as a form
 * (curl's -d without -H 'Content-Type: application/json') is refused naming the header, while the
 * forms existing clients send keep working.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { databaseKind, startTestApp, type ApiResponse, type TestContext } from './helpers/harness.js';

const form = 'application/x-www-form-urlencoded';

describe(`errors that teach (${databaseKind})`, () => {
  let ctx: TestContext;
  before(async () => {
    ctx = await startTestApp();
  });
  after(async () => ctx.close());

  function refused(response: ApiResponse, param: string, message: RegExp) {
    assert.equal(response.status, 400, response.raw);
    assert.equal(response.body.code, 'invalid_request', response.raw);
    assert.equal(response.body.data.param, param, response.raw);
    assert.match(response.body.msg, message);
  }

  test('a misspelt required field is named with the field it was meant to be, not only "amount is required"', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/payment/create', { ammount: '1999', currency: 'USD' });
    refused(response, 'ammount', /^ammount is not a recognized field: did you mean amount\? \(amount is required\)$/);
    assert.equal(response.body.data.suggestion, 'amount');
    // Nested too, and in another spelling convention (snake_case for camelCase).
    const method = await merchant.call('POST', '/payment_methods/create', {
      type: 'card',
      card: { card_no: '4242424242424242', expMonth: '12', expYear: '2030', securityCode: '123' },
    });
    refused(method, 'card.card_no', /^card\.card_no is not a recognized field: did you mean cardNo\?/);
    assert.doesNotMatch(method.raw, /4242424242424242/);
  });

  test('an unknown optional field is named with the closest known one; a name near none is named alone', async () => {
    const merchant = await ctx.merchant();
    const typo = await merchant.call('POST', '/payment/create', { amount: '1999', currency: 'USD', custommerId: '' });
    refused(typo, 'custommerId', /^custommerId is not a recognized field: did you mean customerId\?$/);
    assert.equal(typo.body.data.suggestion, 'customerId');
    const far = await merchant.call('POST', '/customers/create', { email: 'ada@example.com', colour: 'blue' });
    refused(far, 'colour', /^colour is not a recognized field$/);
    assert.equal(far.body.data.suggestion, undefined);
  });

  test('two letters swapped count one edit: emial, phnoe, ulr and sinec are named with the field meant', async () => {
    const merchant = await ctx.merchant();
    // Optional fields: refused as unknown, with the suggestion.
    const customer = await merchant.call('POST', '/customers/create', { emial: 'ada@example.com', phnoe: '+3120' });
    refused(customer, 'emial', /^emial is not a recognized field: did you mean email\?$/);
    assert.equal(customer.body.data.suggestion, 'email');
    const phone = await merchant.call('POST', '/customers/create', { phnoe: '+31201234567' });
    refused(phone, 'phnoe', /^phnoe is not a recognized field: did you mean phone\?$/);
    // Required fields: the missing field's nearest unknown one is named, not the first sent.
    const endpoint = await merchant.call('POST', '/webhook_endpoints/create', {
      colour: 'blue',
      ulr: 'https://shop.example/hooks',
      enabledEvents: ['payment.succeeded'],
    });
    refused(endpoint, 'ulr', /^ulr is not a recognized field: did you mean url\? \(url is required\)$/);
    assert.equal(endpoint.body.data.suggestion, 'url');
    const recover = await merchant.call('POST', '/webhook_endpoints/we_0000000000000000/recover', {
      sinec: '2026-11-22T18:30:00.000Z',
    });
    refused(recover, 'sinec', /^sinec is not a recognized field: did you mean since\? \(since is required\)$/);
    // A swap is one edit, not a licence: a name near nothing still gets no suggestion.
    // (mial → email is a swap and an insertion: two edits, over the one a four-letter name may have.)
    const far = await merchant.call('POST', '/customers/create', { mial: 'ada@example.com' });
    refused(far, 'mial', /^mial is not a recognized field$/);
  });

  test('a JSON body sent as a form (curl -d without the header) is refused naming Content-Type, creating nothing', async () => {
    const merchant = await ctx.merchant();
    for (const body of ['{"firstName":"A"}', '  {"firstName":', '[{"firstName":"A"}]']) {
      const response = await merchant.call('POST', '/customers/create', body, { 'content-type': form });
      refused(response, 'body', /Content-Type: application\/json/);
      assert.doesNotMatch(response.body.msg, /firstName/);
    }
    const listed = await merchant.call('GET', '/customers');
    assert.deepEqual(listed.body.data.data, []);
  });

  test('a real form, as the Java SDK and merchant servers send it, is still taken', async () => {
    const merchant = await ctx.merchant();
    const response = await merchant.call('POST', '/customers/create', 'firstName=Ada&email=ada%40example.com', {
      'content-type': `${form};charset=UTF-8`,
    });
    assert.equal(response.status, 200, response.raw);
    assert.equal(response.body.data.firstName, 'Ada');
  });
});
