import { registry } from '../../services/observability/metrics.ts';

/**
 * One sample of this process's registry, as a scrape would show it: `name` with exactly `labels` (a histogram's
 * `_count`, `_sum` or `_bucket` by that name); 0 while the series has not been recorded. Tests take the difference
 * around what they do, since every test of the run records into the same registry.
 */
export async function metricValue(name: string, labels: Record<string, string>): Promise<number> {
  const metric = registry.getSingleMetric(name) ?? registry.getSingleMetric(name.replace(/_(count|sum|bucket)$/, ''));
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const wanted = Object.entries(labels);
  const hit = values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? name) === name &&
      Object.keys(v.labels).length === wanted.length &&
      wanted.every(([k, value]) => v.labels[k] === value),
  );
  return hit?.value ?? 0;
}

/**
 * Waits (up to 5 s) until `name`/`labels` reaches `value`: an activity counts right after its commit, so a test that
 * saw the commit in the database may look a moment before the count. Answers the last value read.
 */
export async function metricReaches(name: string, labels: Record<string, string>, value: number): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const now = await metricValue(name, labels);
    if (now >= value || Date.now() > deadline) return now;
    await new Promise((r) => setTimeout(r, 20));
  }
}
