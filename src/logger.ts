import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * One logger for the service. Request bodies are never logged; the redaction below is a second
 * line of defence so that a card number or key that reaches a log object anyway is masked.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: [
          'req.headers.authorization',
          'headers.authorization',
          '*.cardNo',
          '*.securityCode',
          '*.*.cardNo',
          '*.*.securityCode',
          'body',
          '*.body',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
