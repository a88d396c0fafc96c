// Routing: #/queues, #/dead-letters?queue=..&message=.., #/jobs?type=..&key=..
/** @import { Route } from './types.ts' */
import { browser, location } from './browser.js';
import { useEffect, useState } from './vendor/preact-htm.js';

/** @returns {Route} the place in the address bar's hash */
function parseRoute() {
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  return { path: path || '/queues', params: Object.fromEntries(new URLSearchParams(query)) };
}

/**
 * The hash of a place; empty and absent params are left out.
 * @param {string} path
 * @param {Readonly<Record<string, string | undefined>>} [params]
 */
export function href(path, params = {}) {
  const query = new URLSearchParams(
    /** @type {[string, string][]} */ (Object.entries(params).filter(([, v]) => v !== undefined && v !== '')),
  );
  const text = query.toString();
  return `#${path}${text ? `?${text}` : ''}`;
}

/** The current place, re-rendering on every change. */
export function useRoute() {
  const [route, setRoute] = useState(parseRoute());
  useEffect(() => {
    const onChange = () => setRoute(parseRoute());
    browser.addEventListener('hashchange', onChange);
    return () => browser.removeEventListener('hashchange', onChange);
  }, []);
  return route;
}
