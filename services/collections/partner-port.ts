/**
 * The collection partner port: where a case goes at hand-over (OVERDRAGET), the påkrav deadline having expired
 * (docs/collections.md, "The hand-over"). Two adapters (activities/collections/): a local one writing one JSON document
 * per case under DATA_DIR/collections/, and the production one POSTing the same document, signed per Standard Webhooks,
 * to COLLECTION_PARTNER_URL. A hand-over happens exactly once per case across crashes and retries: the document's
 * `handOverId` is stable per case and the adapters treat a repeat with the same id as the same hand-over.
 *
 * The document is the only place a debtor's CPR number leaves the database (decrypted for it alone).
 */
export interface HandOverDebtor {
  type: 'person' | 'virksomhed';
  name: string;
  cvr: string | null;
  /** Decrypted only into this document. */
  cpr: string | null;
  address: { gade?: string; postnummer?: string; by?: string; land?: string; darId?: string; kommunekode?: string } | null;
  email: string | null;
  phone: string | null;
}

export interface HandOverClaim {
  principalOere: number;
  dueDate: string;
  invoiceDate: string | null;
  description: string | null;
  /** Reminder fees charged on the claim (an invoice's reminders); 0 for a claim given in POST /v1/cases. */
  feesOere: number;
  /**
   * Late-payment interest posted on the claim up to the hand-over (renteloven §§ 3 and 5), a claim item of its own,
   * with the statutory rate it was last posted at; 0 and null for none.
   */
  interestOere: number;
  interestRateBp: number | null;
  /** The 310 kr compensation charged on the claim (renteloven § 9 a, stk. 3); 0 for none. */
  compensationOere: number;
  /** Paid and credited towards the claim so far. */
  paidOere: number;
}

export interface HandOverDocument {
  /** Stable per case: `<organisation id>:<case id>`. A repeat with the same id is the same hand-over. */
  handOverId: string;
  organization: { id: string; name: string; cvr: string | null };
  case: { id: string; caseNumber: number; externalReference: string | null; invoiceId: string | null; invoiceNumber: number | null };
  paakrav: { sentOn: string; deadline: string };
  handedOverOn: string;
  claims: HandOverClaim[];
  debtors: HandOverDebtor[];
  /** The sum of what is outstanding (principal + fees + interest + compensation − paid). */
  outstandingOere: number;
}

export interface CollectionPartner {
  handOver(doc: HandOverDocument): Promise<{ reference: string }>;
}
