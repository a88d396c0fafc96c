// One view of the console API read when a page (or panel) opens and again on its Refresh button:
// the view of the last good read, the error of the last read, and whether a read or an action is
// under way (the buttons are disabled meanwhile). Shared by the schedules page and the limits panel.
import { messageOf } from './api.js';
import { useEffect, useState } from './vendor/preact-htm.js';

/**
 * @template T
 * @typedef {object} RefreshedView
 * @property {T | null} view the last view read; null until the first read succeeds
 * @property {string | null} error the last read's (or action's) error, null after a good read
 * @property {boolean} busy a read or an action is under way
 * @property {() => void} load reads the view again (the Refresh button)
 * @property {(busy: boolean) => void} setBusy marks an action of the page as under way, or done
 * @property {(error: string | null) => void} setError shows an action's error, or clears it
 */

/**
 * Reads `read()` once when the component mounts and again at each `load()`.
 * @template T
 * @param {() => Promise<T>} read
 * @returns {RefreshedView<T>}
 */
export function useRefreshedView(read) {
  const [view, setView] = useState(/** @type {T | null} */ (null));
  const [error, setError] = useState(/** @type {string | null} */ (null));
  const [busy, setBusy] = useState(false);
  const load = () => {
    setBusy(true);
    read()
      .then(
        (v) => {
          setView(v);
          setError(null);
        },
        (e) => setError(messageOf(e)),
      )
      .finally(() => setBusy(false));
  };
  useEffect(() => {
    load();
    return undefined;
  }, []);
  return { view, error, busy, load, setBusy, setError };
}
