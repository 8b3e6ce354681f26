import { Type, type Static } from 'typebox';
import { DateTimeString, Nullable } from './common.ts';
import { DomainStatus } from './payment-domain.ts';

/** The portal's colour palettes, the 18 `palette` values (docs/api-conventions.md, "Customer portal settings"). */
export const PALETTES = [
  'smoer', 'lys', 'beton', 'sand', 'graa', 'mint', 'blaa', 'is', 'groen', 'varm', 'lavendel', 'rosa', 'moerk', 'midnat', 'grafit', 'skov', 'espresso', 'vin',
] as const;
export type PaletteName = (typeof PALETTES)[number];

export const Palette = Type.Union(
  [
    Type.Literal('smoer'), Type.Literal('lys'), Type.Literal('beton'), Type.Literal('sand'), Type.Literal('graa'), Type.Literal('mint'),
    Type.Literal('blaa'), Type.Literal('is'), Type.Literal('groen'), Type.Literal('varm'), Type.Literal('lavendel'), Type.Literal('rosa'),
    Type.Literal('moerk'), Type.Literal('midnat'), Type.Literal('grafit'), Type.Literal('skov'), Type.Literal('espresso'), Type.Literal('vin'),
  ],
  { description: "The colour palette of the portal's pages" },
);

const Subdomain = Type.String({
  minLength: 3,
  maxLength: 40,
  pattern: '^[a-z0-9]([a-z0-9-]*[a-z0-9])?$',
  description: 'Lower-case letters, digits and hyphens, 3..40 characters, not starting or ending with a hyphen; one organisation\'s at a time',
});
const PrimaryColor = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: '`#` and 6 hex digits, as given' });

/** docs/api-conventions.md "Customer portal settings"; docs/customer-portal.md. */
export const CustomerPortal = Type.Object(
  {
    subdomain: Nullable(Type.String({ description: 'null until one is chosen' })),
    active: Type.Boolean({ description: 'Whether debtors can sign in; needs a subdomain' }),
    subscriptionSelfService: Type.Boolean({ description: 'Whether debtors can pause, resume or cancel their subscriptions in the portal' }),
    primaryColor: Nullable(Type.String({ description: '`#` and 6 hex digits, or null for the palette\'s own' })),
    palette: Palette,
    customDomain: Nullable(Type.String({ description: 'A host name of the organisation\'s, in lower case, to be a CNAME to the portal' })),
    customDomainStatus: DomainStatus,
    customDomainCheckedAt: Nullable(Type.String({ ...DateTimeString, description: 'When the custom domain was last checked' })),
    customDomainFailureReason: Nullable(Type.String({ description: 'Why the last check failed, in one sentence; null unless `customDomainStatus` is `failed`' })),
    url: Nullable(
      Type.String({
        description:
          'Where the portal is served: https://<customDomain> once that is verified, else the subdomain\'s address; null without a subdomain',
      }),
    ),
  },
  { title: 'CustomerPortal' },
);
export type CustomerPortal = Static<typeof CustomerPortal>;

export const CustomerPortalPatch = Type.Object(
  {
    subdomain: Type.Optional(Subdomain),
    active: Type.Optional(Type.Boolean()),
    subscriptionSelfService: Type.Optional(Type.Boolean()),
    primaryColor: Type.Optional(Nullable(PrimaryColor)),
    palette: Type.Optional(Palette),
    customDomain: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 255, description: 'A DNS host name with at least one dot, or null to remove it; not a host name: 422 invalid_domain' })),
    ),
  },
  { additionalProperties: false, title: 'CustomerPortalPatch' },
);
export type CustomerPortalPatch = Static<typeof CustomerPortalPatch>;
