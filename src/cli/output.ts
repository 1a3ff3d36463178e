import { colorWanted } from '../config.js';

/**
 * How the `tessera` commands print: on a terminal aligned and colored, on a pipe plain text
 * (NO_COLOR too); `--json` prints the API's objects for scripts instead.
 */

/** ANSI colors when wanted, else the text unchanged. */
export function painter() {
  const on = colorWanted(process.stdout.isTTY === true);
  const paint = (code: number) => (text: string) => (on ? `\u001b[${code}m${text}\u001b[0m` : text);
  return { dim: paint(2), bold: paint(1), green: paint(32), red: paint(31), yellow: paint(33), cyan: paint(36) };
}

const colors = painter();

export function printJson(value: unknown): number {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  return 0;
}

/** Paints one cell of a table, given its row number and its padded text. */
export type CellPainter = ((row: number, text: string) => string) | undefined;

/** Aligned columns under a bold header; the last column is not padded. */
export function table(header: string[], rows: string[][], paint: readonly CellPainter[] = []): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[], row: number) =>
    cells
      .map((cell, column) => {
        const padded = column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0);
        return row < 0 ? colors.bold(padded) : (paint[column]?.(row, padded) ?? padded);
      })
      .join('  ')
      .trimEnd();
  return [line(header, -1), ...rows.map((cells, row) => line(cells, row))].join('\n');
}
