import { html, type SafeHtml } from '../web/html.js';

export interface Bar {
  /** The x-axis label: a day, YYYY-MM-DD. */
  label: string;
  value: number;
  /** The value as people read it, for the bar's tooltip and the screen reader's label. */
  text: string;
}

const width = 900;
const height = 200;
const top = 36;
const bottom = 36;

/**
 * A bar chart drawn on the server as SVG (docs/decisions/0005): no script, no inline style (the
 * CSP forbids both); colours come from the stylesheet's classes. Each bar has a <title> and the
 * chart an accessible name; the page also has the numbers as a table.
 */
export function barChart(options: { id: string; title: string; bars: readonly Bar[]; maxText: string }): SafeHtml {
  const { bars } = options;
  const max = Math.max(...bars.map((bar) => bar.value), 0);
  const slot = width / Math.max(bars.length, 1);
  const plot = height - top - bottom;
  const rects = bars.map((bar, index) => {
    const barHeight = max === 0 ? 0 : Math.max((bar.value / max) * plot, bar.value > 0 ? 1 : 0);
    const x = (index * slot + 2).toFixed(1);
    const y = (top + plot - barHeight).toFixed(1);
    return html`<rect class="bar" x="${x}" y="${y}" width="${(slot - 4).toFixed(1)}" height="${barHeight.toFixed(1)}">
      <title>${bar.label}: ${bar.text}</title>
    </rect>`;
  });
  const tick = (index: number, anchor: string) =>
    bars[index]
      ? html`<text class="axis" x="${(index * slot + slot / 2).toFixed(1)}" y="${height - 6}" text-anchor="${anchor}">
          ${bars[index]!.label.slice(5)}
        </text>`
      : '';
  return html`<figure class="chart">
    <figcaption id="${options.id}-title">${options.title}</figcaption>
    <svg
      class="chart"
      viewBox="0 0 ${width} ${height}"
      role="img"
      aria-labelledby="${options.id}-title"
      xmlns="http://www.w3.org/2000/svg"
    >
      <line class="baseline" x1="0" y1="${top + plot}" x2="${width}" y2="${top + plot}" />
      <text class="axis" x="0" y="26">max ${options.maxText}</text>
      ${rects} ${tick(0, 'start')} ${tick(Math.floor(bars.length / 2), 'middle')} ${tick(bars.length - 1, 'end')}
    </svg>
  </figure>`;
}
