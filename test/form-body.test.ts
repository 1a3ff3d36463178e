/** Form bodies as the provider's clients write them (docs/api.md#compatibility-with-existing-clients): the parser on its own. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '../src/core/errors.js';
import { formKeyPath, parseFormBody } from '../src/http/form-body.js';

function refusal(text: string): { param: string | undefined; message: string } {
  try {
    parseFormBody(text);
  } catch (err) {
    assert.ok(err instanceof DomainError);
    return { param: err.details?.param, message: err.message };
  }
  assert.fail(`${text} was accepted`);
}

describe('form bodies', () => {
  test('reads bracket and dot notation alike, and PHP http_build_query output', () => {
    assert.deepEqual(formKeyPath('billingDetails[address][city]'), ['billingDetails', 'address', 'city']);
    assert.deepEqual(formKeyPath('lineItems[0].name'), ['lineItems', '0', 'name']);
    assert.deepEqual(formKeyPath('created.gte'), ['created', 'gte']);
    assert.deepEqual(formKeyPath('images[]'), ['images', '']);
    for (const malformed of ['[a]', 'a[b', 'a]b', 'a..b', '.a']) assert.equal(formKeyPath(malformed), null, malformed);
    assert.deepEqual(parseFormBody('a=1&billingDetails%5Baddress%5D%5Bcity%5D=S%C3%A3o+Paulo&shipping.firstName=Ada'), {
      a: '1',
      billingDetails: { address: { city: 'São Paulo' } },
      shipping: { firstName: 'Ada' },
    });
  });

  test('builds lists from indices, [] and repeated keys, in order and without holes', () => {
    assert.deepEqual(parseFormBody('items[0][name]=a&items[1][name]=b&items[0][quantity]=2'), {
      items: [{ name: 'a', quantity: '2' }, { name: 'b' }],
    });
    assert.deepEqual(parseFormBody('images[]=x&images[]=y'), { images: ['x', 'y'] });
    assert.deepEqual(parseFormBody('types=card&types=alipay'), { types: ['card', 'alipay'] });
    assert.deepEqual(parseFormBody('items[2]=c&items[0]=a'), { items: ['a', 'c'] });
    assert.deepEqual(parseFormBody(''), {});
    assert.deepEqual(parseFormBody('empty='), { empty: '' });
  });

  test('refuses a key that is both a value and a group, naming it, without quoting any value', () => {
    const clash = refusal('card=4242424242424242&card[cardNo]=4242424242424242');
    assert.equal(clash.param, 'card');
    assert.ok(!clash.message.includes('4242'));
    assert.equal(refusal('a[b]=1&a[b][c]=2').param, 'a.b');
    assert.equal(refusal('a[0]=1&a[b]=2').param, 'a');
  });

  test('refuses prototype keys, huge list indices and nesting deeper than any request', () => {
    assert.equal(refusal('__proto__[admin]=1').param, '__proto__');
    assert.equal(refusal('a[constructor][prototype]=1').param, 'a.constructor');
    assert.equal(({} as Record<string, unknown>).admin, undefined);
    assert.equal(refusal('items[1000][name]=x').param, 'items');
    assert.equal(refusal(`a${'[b]'.repeat(40)}=1`).param, 'body');
    assert.equal(refusal('[x]=1').param, 'body');
  });
});
