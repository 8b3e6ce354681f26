import { Type, type Static } from 'typebox';
import { ListQuery, Uuid } from './common.ts';

export const Member = Type.Object(
  {
    userId: Uuid,
    name: Type.String(),
    email: Type.String({ description: 'As the operator wrote it' }),
    role: Type.String({ description: 'A role key of GET /v1/roles' }),
    createdAt: Type.String({ format: 'date-time' }),
  },
  { title: 'Member' },
);
export type Member = Static<typeof Member>;

export const Role = Type.Object(
  {
    key: Type.String({ description: '`admin`, `bookkeeper` or `viewer`' }),
    name: Type.String(),
    scopes: Type.Array(Type.String(), { description: 'The scopes the role grants, in catalogue order' }),
  },
  { title: 'Role' },
);

export const MemberPatch = Type.Object(
  { role: Type.String({ minLength: 1, maxLength: 60, description: 'A role key of GET /v1/roles' }) },
  { additionalProperties: false, title: 'MemberPatch' },
);
export type MemberPatch = Static<typeof MemberPatch>;

export const MemberListQuery = Type.Object({ ...ListQuery }, { additionalProperties: false });
export type MemberListQuery = Static<typeof MemberListQuery>;
