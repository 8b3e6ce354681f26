import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { Envelope } from '../../../../contracts/common.ts';
import { Branding, LOGO_BODY_LIMIT, LogoDeleteQuery, LogoUpload } from '../../../../contracts/branding.ts';
import { getBranding } from '../../../branding/get-branding.ts';
import { removeLogo } from '../../../branding/remove-logo.ts';
import { uploadLogo } from '../../../branding/upload-logo.ts';
import { mutate } from '../../idempotency.ts';
import type { AppDeps } from '../../app.ts';

const tags = ['Branding'];

export function brandingRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { db } = deps;

  app.get(
    '/branding',
    {
      config: { scope: 'settings:read' },
      schema: {
        summary: "The organisation's logos",
        description: 'The current `light` and `dark` logo (null when there is none), each with its type, size in bytes, SHA-256 and pixel size.',
        tags,
        response: { 200: Envelope(Branding) },
      },
    },
    async (req) => ({ data: await db.read((sql) => getBranding(sql, req.auth.organizationId)), meta: {} }),
  );

  app.put<{ Body: LogoUpload }>(
    '/branding/logo',
    {
      config: { scope: 'settings:write' },
      // 1 MiB, refused as 413 payload_too_large before the body is read or parsed.
      bodyLimit: LOGO_BODY_LIMIT,
      schema: {
        summary: 'Upload a logo',
        description:
          'Sets the `light` (default) or `dark` logo. `data` is the image in base64; decoded it must be a complete image of the ' +
          'type `mime` names, at most 512 KiB and 4000 × 4000 pixels, else 422 `logo_invalid` with the reason. An SVG must be ' +
          'well-formed XML and is stored sanitised (no scripts, event attributes, external references or `foreignObject`): ' +
          '`sha256` and `bytes` describe the sanitised image. The light logo is printed on invoices, credit notes, reminders and ' +
          'receipts issued from now on (issued documents keep theirs) and shown on the pay page. Body at most 1 MiB.',
        tags,
        body: LogoUpload,
        response: { 200: Envelope(Branding) },
      },
    },
    async (req, reply) => mutate(deps, req, reply, await uploadLogo(req.auth.organizationId, req.body)),
  );

  app.delete<{ Querystring: LogoDeleteQuery }>(
    '/branding/logo',
    {
      config: { scope: 'settings:write' },
      schema: {
        summary: 'Remove a logo',
        description:
          'Removes the `light` (default) or `dark` logo: 204, also when there was none. Documents already issued keep the logo ' +
          'they were issued with.',
        tags,
        querystring: LogoDeleteQuery,
        response: { 204: Type.Null({ description: 'Removed, or there was none' }) },
      },
    },
    (req, reply) =>
      mutate(deps, req, reply, async (tx) => {
        await removeLogo(tx, req.auth.organizationId, req.query.variant ?? 'light');
        return { status: 204 };
      }),
  );
}
