import { isUuid } from '../../services/shared/ids.ts';
import { createKeyring } from '../../services/shared/crypto.ts';
import { readConfig } from '../../services/shared/config.ts';
import { resolveMasterKey } from '../../services/shared/dev-secrets.ts';
import { addMember, MemberExistsError } from '../members/member-queries.ts';
import { ROLE_KEYS, isRole } from '../members/roles.ts';
import { OperatorError, UsageError, type Command } from './commands.ts';

/** `add-member --org ID --email E --name N --role R`: a person of the organisation (docs/api-conventions.md). */
export const addMemberCommand: Command = {
  summary: 'Add a member (a person of the organization) with a role: admin, bookkeeper or viewer.',
  synopsis: '--org ORG_ID --email EMAIL --name NAME --role ROLE [--json]',
  flags: { org: 'string', email: 'string', name: 'string', role: 'string' },
  prepare(flags) {
    const text = (name: string, max: number): string => {
      const raw = flags.get(name);
      if (raw === undefined) throw new UsageError(`--${name} is required`);
      const value = String(raw).trim();
      if (value.length < 1 || value.length > max) throw new UsageError(`--${name} must be 1 to ${max} characters`);
      return value;
    };
    const organizationId = text('org', 36);
    if (!isUuid(organizationId)) throw new UsageError('--org must be a UUID');
    const email = text('email', 254);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new UsageError('--email must be an e-mail address of at most 254 characters');
    const name = text('name', 200);
    const role = text('role', 60);
    if (!isRole(role)) throw new UsageError(`--role must be one of ${ROLE_KEYS.join(', ')}, got "${role}"`);
    return async (db) => {
      // Members' e-mail addresses are encrypted with the API's key (DATA_ENCRYPTION_KEY, or the development key file).
      const keyring = createKeyring(resolveMasterKey(readConfig()).key);
      let member;
      try {
        member = await db.tx((tx) => addMember(tx, keyring, { organizationId, name, email, role }));
      } catch (err) {
        if (err instanceof MemberExistsError) throw new OperatorError(err.message);
        throw err;
      }
      if (!member) throw new OperatorError(`No organization with id ${organizationId} exists.`);
      return {
        json: { organizationId, ...member },
        text: `Added ${member.name} <${member.email}> to organization ${organizationId} as ${member.role} (user ${member.userId}).`,
      };
    };
  },
};
