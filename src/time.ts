/** docs/api.md#what-the-service-does: ISO 8601 UTC with milliseconds and a trailing Z. */
export function isoTimestamp(date: Date): string {
  return date.toISOString();
}
