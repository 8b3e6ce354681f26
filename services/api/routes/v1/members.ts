import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope, ListEnvelope } from '../../../../contracts/common.ts';
import { Member, MemberListQuery, MemberPatch, Role } from '../../../../contracts/members.ts';
import { listMembers, updateMemberRole } from '../../../members/member-queries.ts';
import { listRoles } from '../../../members/roles.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const MemberParams = Type.Object({ userId: Type.String({ description: 'Member user id (UUID)' }) }, { additionalProperties: false });
const tags = ['Members'];

export function memberRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db, keyring } = deps;

  app.get<{ Querystring: MemberListQuery }>(
    '/roles',
    {
      config: { scope: 'members:read' },
      schema: {
        summary: 'The role catalogue',
        description:
          '`admin` holds every scope; `bookkeeper` all but members:manage, settings:write and webhooks:manage; `viewer` the :read scopes and api:discovery. ' +
          'A list like every other: `limit` and `cursor`, `meta.nextCursor`.',
        tags,
        querystring: MemberListQuery,
        response: { 200: ListEnvelope(Role) },
      },
    },
    async (req) => {
      const { items, nextCursor } = listRoles(keyring, req.auth.organizationId, req.query);
      return { data: items, meta: { nextCursor } };
    },
  );

  app.get<{ Querystring: MemberListQuery }>(
    '/members',
    {
      config: { scope: 'members:read' },
      schema: { summary: "The organisation's members, oldest first", tags, querystring: MemberListQuery, response: { 200: ListEnvelope(Member) } },
    },
    async (req) => {
      const { items, nextCursor } = await db.read((sql) => listMembers(sql, keyring, req.auth.organizationId, req.query));
      return { data: items, meta: { nextCursor } };
    },
  );

  app.patch<{ Params: { userId: string }; Body: MemberPatch }>(
    '/members/:userId',
    {
      config: { scope: 'members:manage' },
      schema: {
        summary: "Change a member's role",
        description: 'An unknown role: 422 unknown_role. Taking the admin role from the last admin: 422 last_admin.',
        tags,
        params: MemberParams,
        body: MemberPatch,
        response: { 200: Envelope(Member) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => ({
        status: 200,
        data: await updateMemberRole(tx, keyring, req.auth.organizationId, req.params.userId, req.body.role),
      })),
  );
}
