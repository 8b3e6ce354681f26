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
