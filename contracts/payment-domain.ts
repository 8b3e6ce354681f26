import { Type, type Static } from 'typebox';
import { DateTimeString, Nullable } from './common.ts';

/** docs/api-conventions.md "Payment domain". */
export const DomainStatus = Type.Union([Type.Literal('none'), Type.Literal('unverified'), Type.Literal('verified'), Type.Literal('failed')], {
  description: '`none` without a domain; `unverified` once set or changed; `verified` or `failed` by the last check',
});
export type DomainStatus = Static<typeof DomainStatus>;

export const PaymentDomain = Type.Object(
  {
    domain: Nullable(Type.String({ description: 'The host name, in lower case' })),
    status: DomainStatus,
    verification: Nullable(
      Type.Object(
        {
          type: Type.Literal('TXT'),
          name: Type.String({ description: '`_faktura-verify.<domain>`' }),
          value: Type.String({ description: "The text the TXT record must hold: the organisation's own, the same for every domain it sets" }),
        },
        { description: 'The DNS record to publish; null while no domain is set' },
      ),
    ),
    checkedAt: Nullable(Type.String({ ...DateTimeString, description: 'When the last check ran; null until the domain is checked' })),
    failureReason: Nullable(Type.String({ description: 'Why the last check failed, in one sentence; null unless `status` is `failed`' })),
  },
  { title: 'PaymentDomain' },
);
export type PaymentDomain = Static<typeof PaymentDomain>;

export const PaymentDomainPut = Type.Object(
  {
    domain: Nullable(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'A DNS host name with at least one dot (any case; stored in lower case), or null to clear it. Not a host name: 422 invalid_domain',
      }),
    ),
  },
  { additionalProperties: false, title: 'PaymentDomainPut' },
);
export type PaymentDomainPut = Static<typeof PaymentDomainPut>;
