// A time chart (uPlot) of one or more series, redrawn in place when its data changes.
import { browser } from './browser.js';
import { html, useEffect, useRef } from './vendor/preact-htm.js';
import uPlot from './vendor/uplot.js';

/** Colors of the queues, in config order. */
export const COLORS = [
  '#2563eb',
  '#16a34a',
  '#d97706',
  '#9333ea',
  '#0891b2',
  '#db2777',
  '#65a30d',
  '#dc2626',
];

/**
 * One line of a chart.
 * @typedef {{ label: string, color: string | undefined, dash?: number[] }} ChartSeries
 */

/**
 * @param {{
 *   title: string,
 *   data: uPlot.AlignedData,
 *   series: readonly ChartSeries[],
 *   note?: string,
 *   yLabel: string,
 *   testId: string,
 * }} props `data`: x (epoch seconds) first, then one array per series (`null`: no value)
 */
export function Chart({ title, data, series, note, yLabel, testId }) {
  /** @type {{ current: import('./types.ts').PageElement | null }} */
  const ref = useRef(null);
  /** @type {{ current: uPlot | null }} */
  const plot = useRef(null);
  const shape = series.map((s) => s.label).join('|');
  useEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    /** @type {uPlot.Options} */
    const opts = {
      width: Math.max(300, el.clientWidth),
      height: 220,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [
        {
          values: (_u, splits) =>
            splits.map((t) => new Date(t * 1000).toLocaleTimeString(undefined, { hour12: false })),
        },
        { label: yLabel, size: 50 },
      ],
      series: [
        {},
        ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, dash: s.dash, spanGaps: true })),
      ],
      legend: { live: true },
    };
    plot.current = new uPlot(opts, data, el);
    const onResize = () => plot.current?.setSize({ width: Math.max(300, el.clientWidth), height: 220 });
    browser.addEventListener('resize', onResize);
    return () => {
      browser.removeEventListener('resize', onResize);
      plot.current?.destroy();
      plot.current = null;
    };
  }, [shape]);
  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);
  return html`<section class="card chart" data-testid=${testId}>
    <h3>${title}</h3>
    <div ref=${ref}></div>
    ${note ? html`<p class="note">${note}</p>` : null}
  </section>`;
}
