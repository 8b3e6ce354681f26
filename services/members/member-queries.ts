import type { Member, MemberListQuery } from '../../contracts/members.ts';
import type { Keyring } from '../shared/crypto.ts';
import type { Queryable } from '../shared/db.ts';
import { decodeCursor, encodeCursor, page, type CursorScope } from '../shared/cursor.ts';
import { DomainError, notFound } from '../shared/errors.ts';
import { isUuid, uuidv7 } from '../shared/ids.ts';
import { ADMIN_ROLE, isRole, ROLE_KEYS } from './roles.ts';

interface MemberRow {
  user_id: string;
  name: string;
  email_enc: Buffer;
  role: string;
  created_at: Date;
}

const toMember = (keyring: Keyring, r: MemberRow): Member => ({
  userId: r.user_id,
  name: r.name,
  email: keyring.decrypt(r.email_enc),
  role: r.role,
  createdAt: r.created_at.toISOString(),
});

/** One address is one member per organisation, whatever its case: the blind index is of the lower-case form. */
export const memberEmailIndex = (keyring: Keyring, email: string): Buffer => keyring.blindIndex('member-email', email.toLowerCase());

export class MemberExistsError extends Error {}

/** The operator command's add-member. Undefined when the organisation does not exist. */
export async function addMember(
  sql: Queryable,
  keyring: Keyring,
  input: { organizationId: string; name: string; email: string; role: string },
): Promise<Member | undefined> {
  if (!isRole(input.role)) throw new Error(`unknown role ${input.role}`);
  const [org] = await sql`SELECT 1 FROM organizations WHERE id = ${input.organizationId}`;
  if (!org) return undefined;
  const rows = await sql<MemberRow[]>`
    INSERT INTO members (organization_id, user_id, name, email_enc, email_bidx, role)
    VALUES (${input.organizationId}, ${uuidv7()}, ${input.name}, ${keyring.encrypt(input.email)}, ${memberEmailIndex(keyring, input.email)}, ${input.role})
    ON CONFLICT (organization_id, email_bidx) DO NOTHING
    RETURNING user_id, name, email_enc, role, created_at`;
  if (rows.length === 0) throw new MemberExistsError(`${input.email} is already a member of organization ${input.organizationId}.`);
  return toMember(keyring, rows[0]!);
}

/** Oldest first (the time-ordered user id), keyset pages. */
export async function listMembers(
  sql: Queryable,
  keyring: Keyring,
  organizationId: string,
  q: MemberListQuery,
): Promise<{ items: Member[]; nextCursor: string | null }> {
  const limit = q.limit ?? 50;
  const scope: CursorScope = { organizationId, list: 'members', filters: [] };
  const after = q.cursor !== undefined ? (decodeCursor(keyring, scope, q.cursor)[0] as string) : null;
  const rows = await sql<MemberRow[]>`
    SELECT user_id, name, email_enc, role, created_at FROM members
    WHERE organization_id = ${organizationId} ${after ? sql`AND user_id > ${after}` : sql``}
    ORDER BY user_id
    LIMIT ${limit + 1}`;
  const { items, nextCursor } = page(rows, limit, (last) => encodeCursor(keyring, scope, [last.user_id]));
  return { items: items.map((r) => toMember(keyring, r)), nextCursor };
}

/**
 * PATCH /v1/members/{userId}: a new role. The organisation's admins are locked first (in one order, so two changes
 * never deadlock): of two concurrent demotions of the last two admins, the second sees the first's result and is
 * refused with 422 last_admin.
 */
export async function updateMemberRole(sql: Queryable, keyring: Keyring, organizationId: string, userId: string, role: string): Promise<Member> {
  if (!isRole(role)) {
    throw new DomainError('unknown_role', `There is no role "${role}"; the roles are ${ROLE_KEYS.join(', ')}.`, {
      details: [{ path: '/role', message: `must be one of: ${ROLE_KEYS.join(', ')}` }],
    });
  }
  if (!isUuid(userId)) throw notFound('member_not_found', 'member');
  const admins = await sql<{ user_id: string }[]>`
    SELECT user_id FROM members WHERE organization_id = ${organizationId} AND role = ${ADMIN_ROLE} ORDER BY user_id FOR UPDATE`;
  const [current] = await sql<{ role: string }[]>`
    SELECT role FROM members WHERE organization_id = ${organizationId} AND user_id = ${userId} FOR UPDATE`;
  if (!current) throw notFound('member_not_found', 'member');
  if (current.role === ADMIN_ROLE && role !== ADMIN_ROLE && admins.length <= 1) {
    throw new DomainError('last_admin', 'The organisation needs at least one admin: make another member admin first.', {
      details: [{ path: '/role', message: 'the last admin keeps the admin role' }],
    });
  }
  const [row] = await sql<MemberRow[]>`
    UPDATE members SET role = ${role}, updated_at = now()
    WHERE organization_id = ${organizationId} AND user_id = ${userId}
    RETURNING user_id, name, email_enc, role, created_at`;
  return toMember(keyring, row!);
}
