import { Type } from 'typebox';
import { Uuid } from './common.ts';

export const Discovery = Type.Object({
  apiVersion: Type.Literal('v1'),
  descriptionVersion: Type.String(),
  organizationId: Uuid,
  scopes: Type.Array(Type.String()),
}, { title: 'Discovery' });
