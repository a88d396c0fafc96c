/**
 * Types of /vendor/uplot.js, the chart library the console serves (uPlot's ESM build, from
 * node_modules/uplot: lib/console/assets.ts): uPlot's own declarations.
 */
import uPlot from 'uplot';

export default uPlot;
