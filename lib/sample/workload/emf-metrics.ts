/** The workers' metrics, summed from the EMF lines they print on stdout. */

/** Sums the values of EMF metrics found in a function's stdout line into `into`; ignores other lines. */
export function addEmfMetrics(line: string, into: Record<string, number>): void {
  if (!line.startsWith('{') || !line.includes('"_aws"')) return;
  let blob: Record<string, unknown>;
  try {
    blob = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return;
  }
  const aws = blob._aws as { CloudWatchMetrics?: { Metrics?: { Name?: string }[] }[] } | undefined;
  for (const directive of aws?.CloudWatchMetrics ?? []) {
    for (const metric of directive.Metrics ?? []) {
      if (!metric.Name || metric.Name === 'JobDuration') continue;
      const value = blob[metric.Name];
      const values = Array.isArray(value) ? value : [value];
      for (const v of values) if (typeof v === 'number') into[metric.Name] = (into[metric.Name] ?? 0) + v;
    }
  }
}
