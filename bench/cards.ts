/** docs/api.md#sandbox-test-cards: cards that succeed on every payment, storing and MIT alike (the benchmarks' cards). */
export const cards = [
  { cardNo: '4242424242424242', securityCode: '123' },
  { cardNo: '5555555555554444', securityCode: '123' },
  { cardNo: '378282246310005', securityCode: '1234' },
  { cardNo: '3566002020360505', securityCode: '123' },
  { cardNo: '6011111111111117', securityCode: '123' },
] as const;
