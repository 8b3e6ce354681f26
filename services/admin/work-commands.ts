import { WORKFLOW_SERVICES } from '../../contracts/workflows.ts';
import { parkedWork, retryParkedWork } from '../clock/wake-index.ts';
import { OperatorError, UsageError, type Command, type Flags } from './commands.ts';

/**
 * Durable work whose retries ran out is parked in the wake index with its last error (docs/architecture.md,
 * "Time-driven work"): these commands show it and put it back in line once the cause is fixed.
 */

const SERVICES = Object.values(WORKFLOW_SERVICES) as string[];

function serviceFlag(flags: Flags): string {
  const raw = flags.get('service');
  if (raw === undefined) throw new UsageError('--service is required');
  const value = String(raw).trim();
  if (!SERVICES.includes(value)) throw new UsageError(`--service must be one of ${SERVICES.join(', ')}, got "${value}"`);
  return value;
}

function keyFlag(flags: Flags): string {
  const raw = flags.get('key');
  if (raw === undefined) throw new UsageError('--key is required');
  const value = String(raw).trim();
  if (value.length === 0 || value.length > 200) throw new UsageError(`--key must be 1 to 200 characters, got "${value}"`);
  return value;
}

export const parkedWorkCommand: Command = {
  summary: 'List durable work that exhausted its retries (newest first, at most 100).',
  synopsis: '[--json]',
  flags: {},
  prepare() {
    return async (db) => {
      const work = await parkedWork(db);
      return {
        json: { work },
        text:
          work.length === 0
            ? 'No parked work.'
            : `Parked work:\n${work.map((w) => `  ${w.service}/${w.key}/${w.handler}  organization ${w.organizationId}  parked ${w.parkedAt}: ${w.lastError ?? ''}`).join('\n')}`,
      };
    };
  },
};

export const retryWorkCommand: Command = {
  summary: 'Put parked work back in line: its wake shard is told, and it runs again at once.',
  synopsis: '--service SERVICE --key KEY [--json]',
  flags: { service: 'string', key: 'string' },
  prepare(flags) {
    const target = { service: serviceFlag(flags), key: keyFlag(flags) };
    return async (db) => {
      const found = await db.read((sql) => retryParkedWork(sql, target));
      if (!found) throw new OperatorError(`No parked work ${target.service}/${target.key} exists.`);
      return { json: { ...target, retried: true }, text: `${target.service}/${target.key} runs again now.` };
    };
  },
};
