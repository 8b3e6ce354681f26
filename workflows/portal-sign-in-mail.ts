import * as restate from '@restatedev/restate-sdk';
import { RETENTION } from './shared/durable.ts';
import { WORK, WORKFLOW_SERVICES, type WorkTarget } from '../contracts/workflows.ts';
import type { SignInMailAttempt } from '../services/pay/portal/deliver-sign-in-mail.ts';
import { dispatchDocument, parkWork } from './shared/dispatch.ts';
import { releasing, type WakeClaimActivities } from './shared/wake-claim.ts';

/**
 * The mail of one customer-portal sign-in link, as a virtual object keyed by the link's id (services/pay/portal).
 * The pay service lists it in the wake index when the link is requested and pokes it after the commit; a lost poke
 * is picked up by the housekeeping loop. Mailing and recording are separate steps, as for invoice mails: once the
 * server has taken the mail, a failure while recording retries the recording only. The journal holds the link's id
 * and the steps' outcomes, never the token or the address.
 */
export const PORTAL_SIGN_IN_MAIL = WORKFLOW_SERVICES.PortalSignInMail;

export interface PortalSignInMailActivities extends WakeClaimActivities {
  mailPortalSignInLink(linkId: string): Promise<SignInMailAttempt>;
  recordDelivery(kind: 'sign-in', linkId: string, attempt: SignInMailAttempt): Promise<{ status: string }>;
  giveUpDelivery(kind: 'sign-in', linkId: string, reason: string): Promise<{ status: string }>;
  parkWork(target: WorkTarget, error: string): Promise<boolean>;
}

export function createPortalSignInMail(activities: PortalSignInMailActivities) {
  return restate.object({
    name: PORTAL_SIGN_IN_MAIL,
    options: RETENTION,
    handlers: {
      deliver: releasing('PortalSignInMail', activities, async (ctx: restate.ObjectContext): Promise<{ status: string }> => {
        const recorded = await dispatchDocument(ctx, {
          name: (verb) => (verb === 'deliver' ? 'mail' : verb),
          deliver: () => activities.mailPortalSignInLink(ctx.key),
          record: (attempt) => activities.recordDelivery('sign-in', ctx.key, attempt),
          giveUp: (error) => activities.giveUpDelivery('sign-in', ctx.key, error),
        });
        if (recorded.ok) return recorded.recorded!;
        await parkWork(ctx, activities, WORK.portalSignInMail(ctx.key), recorded.failed);
        return { status: 'parked' };
      }),
    },
  });
}

export type PortalSignInMail = ReturnType<typeof createPortalSignInMail>;
