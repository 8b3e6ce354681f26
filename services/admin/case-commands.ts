import { withdrawCase } from '../cases/take-due-case-step.ts';
import { isUuid } from '../../services/shared/ids.ts';
import { OperatorError, UsageError, type Command, type Flags } from './commands.ts';
import { CASE_TRANSITIONS } from '../cases/case-lifecycle.ts';

/** Operator commands on collection cases (docs/collections.md). */

function uuidFlag(flags: Flags, name: string): string {
  const raw = flags.get(name);
  if (raw === undefined || raw === true) throw new UsageError(`--${name} is required`);
  const value = String(raw).trim().toLowerCase();
  if (!isUuid(value)) throw new UsageError(`--${name} must be a UUID, got "${value}"`);
  return value;
}

export const withdrawCaseCommand: Command = {
  summary: 'Withdraw a collection case (TILBAGEKALDT) before it is closed: nothing more happens to it.',
  synopsis: '--org ID --case ID [--json]',
  flags: { org: 'string', case: 'string' },
  prepare(flags) {
    const organizationId = uuidFlag(flags, 'org');
    const caseId = uuidFlag(flags, 'case');
    return async (db) => {
      const result = await withdrawCase(db, organizationId, caseId);
      if (result.outcome === 'not_found') throw new OperatorError(`Organization ${organizationId} has no case ${caseId}.`);
      if (result.outcome === 'closed') throw new OperatorError(`Case ${caseId} is ${result.state} already; only an open case can be withdrawn.`);
      return {
        json: { organizationId, caseId, caseNumber: result.caseNumber, from: result.from, state: CASE_TRANSITIONS.withdraw.to, eventVersion: result.eventVersion },
        text: `Case ${result.caseNumber} (${caseId}) withdrawn: ${result.from} → ${CASE_TRANSITIONS.withdraw.to}.`,
      };
    };
  },
};
