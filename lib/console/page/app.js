// The sqs-jobs console page: four views (queues, dead letters, jobs, schedules) over the console's
// JSON API, one module each (queues.js with limits.js, dead-letters.js with redrive.js and
// message.js, jobs.js with chain.js, schedules.js); this one is the frame around them.
//
// Libraries, loaded as they are (no build step): Preact + htm in htm's one-file standalone build
// (13 KB: components and hooks written as tagged templates, no JSX compiler), and uPlot for the
// charts (small and fast on thousands of points, canvas-based, ESM). Both are served by the
// console itself; the page makes no request anywhere else.
//
// Plain ES modules the browser loads as they are, type-checked by `tsc --noEmit` from their JSDoc
// (tsconfig.json checkJs; the API's shapes and the browser's globals in types.ts).
/** @import { ConfigView } from './types.ts' */
import { getConfig, messageOf } from './api.js';
import { document } from './browser.js';
import { DeadLettersPage } from './dead-letters.js';
import { JobsPage } from './jobs.js';
import { QueuesPage } from './queues.js';
import { useRoute } from './route.js';
import { SchedulesPage } from './schedules.js';
import { html, render, useEffect, useState } from './vendor/preact-htm.js';

/** The frame: header, navigation and the page of the route. */
function App() {
  const route = useRoute();
  const [config, setConfig] = useState(/** @type {ConfigView | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  useEffect(() => {
    getConfig().then(
      (value) => {
        document.title = `${value.title} · sqs-jobs console`;
        setConfig(value);
      },
      (e) => setError(messageOf(e)),
    );
  }, []);
  if (error) return html`<p class="error" role="alert">${error}</p>`;
  if (!config) return html`<p class="loading">Loading…</p>`;
  const page = route.path.startsWith('/dead-letters')
    ? 'dead-letters'
    : route.path.startsWith('/jobs')
      ? 'jobs'
      : route.path.startsWith('/schedules')
        ? 'schedules'
        : 'queues';
  const mode =
    config.mode === 'aws'
      ? `AWS ${config.region ?? ''}`
      : config.mode === 'local'
        ? 'local runtime'
        : 'endpoint';
  return html`<div class="shell">
    <header>
      <h1>sqs-jobs <span>${config.title}</span></h1>
      <nav>
        <a href="#/queues" class=${page === 'queues' ? 'active' : ''} data-nav="queues">Queues</a>
        <a href="#/dead-letters" class=${page === 'dead-letters' ? 'active' : ''} data-nav="dead-letters">Dead letters</a>
        <a href="#/jobs" class=${page === 'jobs' ? 'active' : ''} data-nav="jobs">Jobs</a>
        <a href="#/schedules" class=${page === 'schedules' ? 'active' : ''} data-nav="schedules">Schedules</a>
      </nav>
      <span class="badge">${mode}</span>
      ${config.readOnly ? html`<span class="badge warn" data-testid="read-only">read-only</span>` : null}
    </header>
    <main data-page=${page}>
      ${page === 'queues' ? html`<${QueuesPage} config=${config} />` : null}
      ${page === 'dead-letters' ? html`<${DeadLettersPage} config=${config} params=${route.params} />` : null}
      ${page === 'jobs' ? html`<${JobsPage} config=${config} params=${route.params} />` : null}
      ${page === 'schedules' ? html`<${SchedulesPage} config=${config} />` : null}
    </main>
  </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
