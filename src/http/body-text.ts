import type { FastifyRequest } from 'fastify';
import { DomainError } from '../core/errors.js';

// fatal: a byte sequence that is not UTF-8 is refused rather than replaced by U+FFFD, which would
// store something other than what the caller sent.
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text of a request body, read as the API reads every body (docs/api.md#requests): uncompressed and in
 * UTF-8. A body in another encoding or character set is refused naming the header, since reading
 * it as UTF-8 anyway would misread it; invalid UTF-8 is refused naming the body.
 */
export function bodyText(request: FastifyRequest, body: Buffer): string {
  const encoding = String(request.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  if (encoding !== 'identity' && encoding !== '') {
    throw new DomainError('invalid_request', 'Content-Encoding is not supported: send the body uncompressed', {
      param: 'Content-Encoding',
      rule: 'encoding',
    });
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(request.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new DomainError('invalid_request', 'Content-Type charset must be utf-8', {
      param: 'Content-Type',
      rule: 'charset',
    });
  }
  try {
    return strictUtf8.decode(body);
  } catch {
    throw new DomainError('invalid_request', 'The request body is not valid UTF-8', { param: 'body', rule: 'utf8' });
  }
}
