import type { Address, Customer } from '../../../../contracts/customers.ts';

/**
 * The body of a page of GET /v1/customers, byte for byte what the route's response schema writes, at about half the
 * cost. fast-json-stringify picks the branch of every nullable field (a `Nullable` is an `anyOf`) by running the
 * branch's validator on the value, so a 50-row page ran some 600 validations just to write `null` or a string.
 * JSON.stringify writes the same bytes when every value already is what the schema allows, with the keys in the
 * schema's order: the rows come from customerOf (every Customer field, in the schema's order; a unit test holds it to
 * that) with the address in the schema's order too (toCustomers). This checks each value against the branch the
 * schema's serialiser would take, as strictly as its validators or more (lengths in UTF-16 units, which are never
 * fewer than the code points they count), and returns undefined for a page with any other value: the route then
 * answers through its schema as before, errors included.
 */
export interface CustomerPage {
  data: Customer[];
  meta: { nextCursor: string | null };
}

export function customerPageJson(page: CustomerPage): string | undefined {
  const { data, meta } = page;
  if (meta.nextCursor !== null && typeof meta.nextCursor !== 'string') return undefined;
  for (const c of data) if (!writable(c)) return undefined;
  return JSON.stringify(page);
}

const text = (v: unknown): boolean => typeof v === 'string';
const textOrNull = (v: unknown): boolean => v === null || typeof v === 'string';

function writable(c: Customer): boolean {
  return (
    text(c.id) &&
    (c.type === 'person' || c.type === 'company') &&
    text(c.name) &&
    textOrNull(c.cvr) &&
    (c.address === null || addressWritable(c.address)) &&
    textOrNull(c.email) &&
    textOrNull(c.phone) &&
    textOrNull(c.contactPerson) &&
    (c.language === null || c.language === 'da' || c.language === 'en') &&
    textOrNull(c.externalReference) &&
    (c.metadata === null || metadataWritable(c.metadata)) &&
    textOrNull(c.ean) &&
    textOrNull(c.peppolId) &&
    textOrNull(c.vatNumber) &&
    typeof c.hasCpr === 'boolean' &&
    text(c.createdAt) &&
    text(c.updatedAt)
  );
}

/** The Address schema's fields in its order, with their maxLength. */
const ADDRESS_FIELDS: readonly (readonly [keyof Address, number])[] = [['street', 200], ['postalCode', 10], ['city', 100], ['country', 100]];

/** Only Address fields, in the schema's order, each a string within its length. */
function addressWritable(a: Address): boolean {
  if (typeof a !== 'object' || Array.isArray(a)) return false;
  let next = 0;
  for (const key in a) {
    while (next < ADDRESS_FIELDS.length && ADDRESS_FIELDS[next]![0] !== key) next++;
    if (next === ADDRESS_FIELDS.length) return false;
    const v = a[key as keyof Address];
    if (typeof v !== 'string' || v.length > ADDRESS_FIELDS[next]![1]) return false;
    next++;
  }
  return true;
}

/** At most 50 keys of 1..40 characters, each value a string of at most 500 (the Metadata schema). */
function metadataWritable(m: Record<string, string>): boolean {
  if (typeof m !== 'object' || Array.isArray(m)) return false;
  let n = 0;
  for (const key in m) {
    if (++n > 50 || key.length === 0 || key.length > 40) return false;
    const v = m[key];
    if (typeof v !== 'string' || v.length > 500) return false;
  }
  return true;
}
