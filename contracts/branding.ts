import { Type, type Static } from 'typebox';
import { DateTimeString, Nullable } from './common.ts';

/** The logo image types (docs/api-conventions.md, "Branding"). */
export const LogoMime = Type.Union(
  [Type.Literal('image/png'), Type.Literal('image/jpeg'), Type.Literal('image/svg+xml'), Type.Literal('image/webp')],
  { description: 'The image type: `image/png`, `image/jpeg`, `image/svg+xml` or `image/webp`' },
);

export type LogoMime = Static<typeof LogoMime>;

export const LogoVariant = Type.Union([Type.Literal('light'), Type.Literal('dark')], {
  description: '`light` (the default) is the logo printed on documents and shown on the pay page; `dark` is kept for dark backgrounds',
});
export type LogoVariant = Static<typeof LogoVariant>;

/** Bounds of a logo (docs/api-conventions.md, "Branding"). */
export const LOGO_MAX_BYTES = 512 * 1024;
export const LOGO_MAX_PIXELS = 4000;
/** The upload's body limit: 1 MiB, as every other route's, stated on the route so it cannot drift. */
export const LOGO_BODY_LIMIT = 1024 * 1024;

export const LogoUpload = Type.Object(
  {
    data: Type.String({
      minLength: 1,
      description: 'The image file in base64 (standard alphabet, padding optional, no line breaks, no `data:` prefix); at most 512 KiB decoded',
    }),
    mime: LogoMime,
    variant: Type.Optional(LogoVariant),
  },
  { additionalProperties: false, title: 'LogoUpload' },
);
export type LogoUpload = Static<typeof LogoUpload>;

export const BrandingLogo = Type.Object(
  {
    mime: LogoMime,
    bytes: Type.Integer({ description: 'Size of the stored image in bytes (an SVG as sanitised)' }),
    sha256: Type.String({ description: 'SHA-256 of the stored bytes, 64 lowercase hex characters' }),
    width: Type.Integer({ description: 'Pixels (an SVG: its width, or its viewBox width, in CSS pixels, rounded up)' }),
    height: Type.Integer({ description: 'Pixels (an SVG: its height, or its viewBox height, in CSS pixels, rounded up)' }),
    updatedAt: DateTimeString,
  },
  { title: 'BrandingLogo' },
);
export type BrandingLogo = Static<typeof BrandingLogo>;

export const Branding = Type.Object(
  { light: Nullable(BrandingLogo), dark: Nullable(BrandingLogo) },
  { title: 'Branding', description: 'The current logo of each variant, or null' },
);
export type Branding = Static<typeof Branding>;

export const LogoDeleteQuery = Type.Object(
  { variant: Type.Optional(Type.Union([Type.Literal('light'), Type.Literal('dark')], { default: 'light', description: '`light` (default) or `dark`' })) },
  { additionalProperties: false },
);
export type LogoDeleteQuery = Static<typeof LogoDeleteQuery>;
