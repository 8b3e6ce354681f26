import { WORK } from '../../../contracts/workflows.ts';
import { clearWake } from '../../clock/wake-index.ts';
import { sentReference, type DeliveryDeps } from '../../dispatch/channels.ts';
import { deliverDocument, type DocumentKind } from '../../dispatch/deliver-document.ts';
import type { DeliveryRecord } from '../../dispatch/record-delivery.ts';
import { mailMessageId } from '../../mail/mail-port.ts';
import type { Db } from '../../shared/db.ts';
import { isUuid } from '../../shared/ids.ts';
import type { Language } from '../texts.ts';
import { signInMail } from './sign-in-mail.ts';

export type SignInMailDeps = Pick<DeliveryDeps, 'db' | 'keyring' | 'mailer' | 'fromAddress'>;

/** What one mail step did (journaled by the workflow: no token, no address in it). */
export type SignInMailAttempt =
  | { kind: 'settled' }
  | { kind: 'mailed'; messageId: string }
  | { kind: 'not_sent'; outcome: 'expired' | 'no_recipient' | 'refused' | 'failed' };

interface SignInLinkRow {
  organization_id: string;
  organization_name: string;
  token_enc: Buffer | null;
  link_base: string;
  language: Language;
  expired: boolean;
  email_enc: Buffer | null;
}

/** The portal sign-in link as a kind of outbound document: one mail, to the address it was asked for. */
export const SIGN_IN_MAIL_DOCUMENT: DocumentKind<SignInMailDeps, SignInLinkRow & { token_enc: Buffer; to: string }, SignInMailAttempt> = {
  async prepare(deps, linkId) {
    if (!isUuid(linkId)) return { settled: { kind: 'settled' } };
    const [link] = await deps.db.read((sql) => sql<SignInLinkRow[]>`
      SELECT l.organization_id, o.name AS organization_name, l.token_enc, l.link_base, l.language, l.expires_at <= now() AS expired,
             (SELECT c.email_enc FROM customers c
              WHERE c.organization_id = l.organization_id AND c.email_bidx = l.email_bidx AND c.email_enc IS NOT NULL
              ORDER BY c.created_at, c.id LIMIT 1) AS email_enc
      FROM portal_sign_in_links l JOIN organizations o ON o.id = l.organization_id
      WHERE l.id = ${linkId}`);
    if (!link?.token_enc) return { settled: { kind: 'settled' } };
    if (link.expired) return { settled: { kind: 'not_sent', outcome: 'expired' } };
    // The customer's address may have changed since the request: the link goes to the address it was asked for or nowhere.
    if (!link.email_enc) return { settled: { kind: 'not_sent', outcome: 'no_recipient' } };
    return { ready: { ...link, token_enc: link.token_enc, to: deps.keyring.decrypt(link.email_enc) } };
  },
  recipient: (link) => ({ channel: 'email', name: link.organization_name, email: link.to }),
  outbound: (link, deps, linkId) => ({
    mail: (to) =>
      signInMail({
        organizationName: link.organization_name,
        fromAddress: deps.fromAddress,
        to: to.email,
        link: `${link.link_base}/${deps.keyring.decrypt(link.token_enc)}`,
        language: link.language,
        messageId: mailMessageId(`portal-sign-in.${linkId}`, deps.fromAddress),
      }),
  }),
  answer: (sent) => (sent.kind === 'refused' ? { kind: 'not_sent', outcome: 'refused' } : { kind: 'mailed', messageId: sentReference(sent) }),
};

/**
 * Step 1 of the PortalSignInMail workflow: mails a requested sign-in link to the address of the customers it was
 * asked for. Writes nothing (step 2 records the outcome from this step's journaled result). A link that has expired
 * meanwhile is not sent: it could not be used. A transient mail failure is thrown for the workflow to retry; the
 * Message-ID is the link's, so a retried send is recognisably the same mail.
 */
export const mailSignInLink = (deps: SignInMailDeps, linkId: string): Promise<SignInMailAttempt> => deliverDocument(SIGN_IN_MAIL_DOCUMENT, deps, linkId);

/**
 * Step 2: records what became of the mail and forgets the token (the mail holds the only copy now), and takes the
 * link out of the wake index.
 */
export async function recordSignInMail(db: Db, linkId: string, attempt: SignInMailAttempt): Promise<{ status: string }> {
  if (!isUuid(linkId)) return { status: 'unknown' };
  return db.tx(async (tx) => {
    const outcome = attempt.kind === 'mailed' ? 'mailed' : attempt.kind === 'not_sent' ? attempt.outcome : null;
    if (outcome !== null) {
      await tx`
        UPDATE portal_sign_in_links SET token_enc = NULL, mail_outcome = ${outcome}, mailed_at = ${outcome === 'mailed' ? tx`now()` : null}
        WHERE id = ${linkId} AND mail_outcome IS NULL`;
    }
    await clearWake(tx, WORK.portalSignInMail(linkId));
    return { status: outcome ?? 'settled' };
  });
}

/** When the workflow gives up (the mail server stayed away past the retries): the token is forgotten all the same. */
export async function giveUpSignInMail(db: Db, linkId: string): Promise<{ status: string }> {
  return recordSignInMail(db, linkId, { kind: 'not_sent', outcome: 'failed' });
}

/** How the sign-in link's mail records its delivery (`recordDelivery('sign-in', …)`): on the link's mail outcome. */
export const SIGN_IN_MAIL_RECORD: DeliveryRecord<string, SignInMailAttempt, { status: string }> = {
  record: recordSignInMail,
  giveUp: (db, linkId) => giveUpSignInMail(db, linkId),
};
