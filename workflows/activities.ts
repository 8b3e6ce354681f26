/**
 * The activity wiring: which use case or adapter each durable step calls, with what resources. No SQL here; every
 * statement lives with its use case in services/ or its adapter in activities/. Every activity passes the activity
 * boundary (shared/activity-boundary.ts), so a business refusal is terminal and never retried.
 */
import { WORK, dunningKey } from '../contracts/workflows.ts';
import { INVOICE_MAIL_RECORD, mailInvoice, type InvoiceMailDeps } from '../activities/invoices/deliver-invoice-mail.ts';
import { purgeIdempotencyKeys } from '../activities/purge-idempotency.ts';
import { deliverWebhook, fanOutAndDeliver, type WebhookActivityDeps } from '../activities/webhooks/webhook-activities.ts';
import { createWebhookAgents } from '../activities/webhooks/post-webhook.ts';
import { createBusinessClock as createPostgresBusinessClock } from '../services/clock/business-clock.ts';
import { armShard, claimDueWakes, clearWake, parkWake, releaseClaimsWithoutInvocation, releaseWake, shardsWithLostWork } from '../services/clock/wake-index.ts';
import type { OpenInvocations } from '../services/clock/engine-invocations.ts';
import { announcePastDue } from '../services/customers/past-due-transitions.ts';
import { createDocumentStore } from '../services/documents/create-document-store.ts';
import type { PdfRenderer } from '../services/documents/pdf-renderer.ts';
import { finishIssue } from '../services/invoices/finish-issue.ts';
import { trackingToken } from '../services/invoices/tracking-token.ts';
import type { DeliveryDeps } from '../services/dispatch/channels.ts';
import type { Mailer } from '../services/mail/mail-port.ts';
import { renderPaymentReceipt } from '../services/payments/render-receipt.ts';
import type { Clock } from '../services/shared/clock.ts';
import type { Config } from '../services/shared/config.ts';
import type { Keyring } from '../services/shared/crypto.ts';
import type { Db } from '../services/shared/db.ts';
import { createEngineClient } from '../services/shared/engine-client.ts';
import type { Resolver } from '../services/webhooks/url-policy.ts';
import { withActivityBoundary } from './shared/activity-boundary.ts';
import { deliverReminder, REMINDER_RECORD } from '../activities/reminders/deliver-reminder.ts';
import { createLetterService } from '../activities/letters/create-letter-service.ts';
import { createAccessPoint } from '../activities/einvoices/create-access-point.ts';
import type { EInvoiceAccessPoint } from '../services/einvoices/einvoice-port.ts';
import type { LetterService } from '../services/letters/letter-port.ts';
import { renderReminderDocument } from '../services/reminders/render-reminder.ts';
import { takeDueDunningStep } from '../services/reminders/take-due-dunning-step.ts';
import { createCollectionPartner } from '../activities/collections/create-collection-partner.ts';
import { CASE_PAAKRAV_RECORD, deliverCasePaakrav } from '../activities/collections/deliver-case-paakrav.ts';
import { renderCasePaakrav } from '../services/cases/render-case-paakrav.ts';
import { awaitsHandOver, recordCaseHandOver, takeDueCaseStep } from '../services/cases/take-due-case-step.ts';
import { archiveHandOver } from '../services/collections/archive-hand-over.ts';
import { handOverFileContent } from '../activities/collections/local-partner.ts';
import { loadHandOverDocument } from '../services/collections/load-hand-over.ts';
import { postInterestAtHandOver } from '../services/interest/post-interest.ts';
import type { CollectionPartner } from '../services/collections/partner-port.ts';
import { runScheduledPeriod } from '../services/subscriptions/run-period.ts';
import { mailSignInLink, SIGN_IN_MAIL_RECORD } from '../services/pay/portal/deliver-sign-in-mail.ts';
import { giveUpDelivery, recordDelivery, type DeliveryRecords } from '../services/dispatch/record-delivery.ts';
import type { Activities } from './index.ts';

export interface ActivityResources {
  keyring: Keyring;
  mailer: Mailer;
  /** Renders the PDFs the workflows make (payment receipts, issues whose request died); the browser starts on the first render. */
  pdf: PdfRenderer;
  /** Business time; defaults to the organisations' clocks read through the activities' pool. */
  clock?: Clock;
  /** DNS for webhook deliveries; tests inject one to play a rebinding name server. */
  webhookResolve?: Resolver;
  /** Hands a webhook delivery to its own WebhookDelivery object through the engine (see WebhookActivityDeps.handOff). */
  webhookHandOff?: (deliveryId: string) => Promise<void>;
  /** Drains the event outbox through this process's relay (the housekeeping loop's backstop for lost notifications). */
  drainEventOutbox?: () => Promise<void>;
  /** Where parked work and failed housekeeping runs are reported. */
  log?: (level: 'info' | 'warn', msg: string, fields: Record<string, unknown>) => void;
  /** Where reminder letters go; defaults to LETTER_API_URL's provider, else PDF files under DATA_DIR/letters. */
  letters?: LetterService;
  /** Where e-invoices go; defaults to EINVOICE_AP_URL's access point, else files under DATA_DIR/einvoices. */
  einvoices?: EInvoiceAccessPoint;
  /** The pay page's address (PAY_BASE_URL), for the payment link on invoices, in their mails and in reminders. */
  payBaseUrl?: string;
  /** Where collection cases are handed over; defaults to COLLECTION_PARTNER_URL's partner, else JSON files under DATA_DIR/collections. */
  collectionPartner?: CollectionPartner;
  /** Which wake-index targets the engine still runs (its admin API), for the backstop's check of old claims. */
  openInvocations?: OpenInvocations;
}

/** How each kind of delivered document records its delivery, by the name the workflows pass (services/dispatch/record-delivery.ts). */
const DELIVERY_RECORDS = {
  invoice: INVOICE_MAIL_RECORD,
  reminder: REMINDER_RECORD,
  paakrav: CASE_PAAKRAV_RECORD,
  'sign-in': SIGN_IN_MAIL_RECORD,
} satisfies DeliveryRecords;

type DeliveryKind = keyof typeof DELIVERY_RECORDS;

/** A one-way poke of one delivery's WebhookDelivery object through Restate's ingress. */
export const restateWebhookHandOff = (ingressUrl: string, db: Db) => {
  const engine = createEngineClient(ingressUrl, db);
  return (deliveryId: string): Promise<void> => engine.poke(WORK.webhookDelivery(deliveryId));
};

export function createActivities(
  db: Db,
  config: Pick<Config, 'idempotencyRetentionDays' | 'mailFromAddress' | 'publicApiUrl'> &
    Partial<
      Pick<
        Config,
        | 'webhookAllowLoopback' | 'letterApiUrl' | 'letterApiKey' | 'einvoiceApUrl' | 'einvoiceApKey' | 'dataDir'
        | 'collectionPartnerUrl' | 'collectionPartnerSecret' | 'documentStore' | 's3Endpoint' | 's3Bucket' | 's3Region'
      >
    >,
  resources: ActivityResources,
): Activities {
  const clock = resources.clock ?? createPostgresBusinessClock(db.sql);
  const webhooks: WebhookActivityDeps = {
    db,
    keyring: resources.keyring,
    clock,
    policy: { allowLoopback: config.webhookAllowLoopback ?? false },
    agents: createWebhookAgents(),
    ...(resources.webhookResolve ? { resolve: resources.webhookResolve } : {}),
    ...(resources.webhookHandOff ? { handOff: resources.webhookHandOff } : {}),
  };
  // The store DOCUMENT_STORE names; callers that pass no store setting (tests of single activities) keep PostgreSQL's.
  const documents = createDocumentStore({ documentStore: config.documentStore ?? 'postgres', s3Endpoint: config.s3Endpoint, s3Bucket: config.s3Bucket, s3Region: config.s3Region ?? 'us-east-1' });
  const log = resources.log ?? (() => {});
  // Created on the first letter: a process that never posts one never touches the letter directory or provider.
  let letters: LetterService | undefined = resources.letters;
  const letterService = (): LetterService =>
    (letters ??= createLetterService(
      { letterApiUrl: config.letterApiUrl, letterApiKey: config.letterApiKey, dataDir: config.dataDir ?? '.data' },
      (level, msg, fields) => log(level === 'error' ? 'warn' : level, msg, fields ?? {}),
    ));
  // What every deliverer hands its document to (services/dispatch/channels.ts); the letter service on its first letter.
  const delivery: DeliveryDeps = {
    db,
    keyring: resources.keyring,
    documents,
    mailer: resources.mailer,
    letters: { send: (letter) => letterService().send(letter) },
    fromAddress: config.mailFromAddress,
  };
  // Created on the first e-invoice, like the letter service.
  let einvoices: EInvoiceAccessPoint | undefined = resources.einvoices;
  const accessPoint = (): EInvoiceAccessPoint =>
    (einvoices ??= createAccessPoint(
      { einvoiceApUrl: config.einvoiceApUrl, einvoiceApKey: config.einvoiceApKey, dataDir: config.dataDir ?? '.data' },
      (level, msg, fields) => log(level === 'error' ? 'warn' : level, msg, fields ?? {}),
    ));
  const mail: InvoiceMailDeps = {
    ...delivery,
    einvoices: { deliver: (d) => accessPoint().deliver(d) },
    trackingPixelUrl: (org, invoiceId) =>
      config.publicApiUrl ? `${config.publicApiUrl.replace(/\/+$/, '')}/t/o/${trackingToken(resources.keyring, org, invoiceId)}.gif` : null,
    payBaseUrl: resources.payBaseUrl,
  };
  // Created on the first hand-over, like the letter service.
  let partner: CollectionPartner | undefined = resources.collectionPartner;
  const collectionPartner = (): CollectionPartner =>
    (partner ??= createCollectionPartner(
      { collectionPartnerUrl: config.collectionPartnerUrl, collectionPartnerSecret: config.collectionPartnerSecret, dataDir: config.dataDir ?? '.data' },
      (level, msg, fields) => log(level === 'error' ? 'warn' : level, msg, fields ?? {}),
    ));
  return withActivityBoundary<Activities>({
    // Housekeeping
    purgeIdempotencyKeys: () => db.read((sql) => purgeIdempotencyKeys(sql, config.idempotencyRetentionDays)),
    shardsWithLostWork: async (graceMs) => {
      // Claims whose invocation the engine no longer has are released first, so their rows count as lost work now.
      if (resources.openInvocations) {
        const released = await releaseClaimsWithoutInvocation(db, resources.openInvocations, graceMs);
        if (released > 0) log('warn', 'claims of wake-index rows whose invocation is gone were released', { released });
      }
      return shardsWithLostWork(db, graceMs);
    },
    drainEventOutbox: () => resources.drainEventOutbox?.() ?? Promise.resolve(),
    announcePastDue: (organizationId) => announcePastDue(db, clock, organizationId),
    retryEventOutbox: async (organizationId) => {
      await db.read((sql) => clearWake(sql, WORK.eventOutbox(organizationId)));
      await (resources.drainEventOutbox?.() ?? Promise.resolve());
    },
    // The wake index
    claimDueWakes: (shard, limit) => claimDueWakes(db, shard, limit),
    armShard: (shard, capMs) => armShard(db, shard, new Date(capMs)),
    releaseWake: (target, token) => releaseWake(db, target, token),
    parkWork: async (target, error) => {
      log('warn', 'durable work exhausted its retries and is parked in the wake index', { service: target.service, key: target.key, error });
      return db.read((sql) => parkWake(sql, target, error));
    },
    // Issuing, mail, receipts
    finishInvoiceIssue: async (invoiceId) => {
      const done = await finishIssue(
        { db, keyring: resources.keyring, pdf: resources.pdf, documents, mailDomain: config.mailFromAddress.split('@')[1]!, payBaseUrl: resources.payBaseUrl },
        invoiceId,
      );
      return {
        finished: done !== undefined,
        mail: done?.dispatchMail ?? false,
        dunning: done?.dunningDue ? dunningKey(done.organizationId, done.invoiceId) : null,
        ...(done ? { organizationId: done.organizationId } : {}),
      };
    },
    mailInvoice: (invoiceId) => mailInvoice(mail, invoiceId),
    // The record and give-up steps of every delivered document, by kind (the workflows' journaled attempt is handed on as it is).
    recordDelivery: ((kind: DeliveryKind, ref: unknown, attempt: unknown) => recordDelivery(db, DELIVERY_RECORDS, kind, ref as never, attempt as never)) as Activities['recordDelivery'],
    giveUpDelivery: ((kind: DeliveryKind, ref: unknown, reason: string) => giveUpDelivery(db, DELIVERY_RECORDS, kind, ref as never, reason)) as Activities['giveUpDelivery'],
    renderPaymentReceipt: (paymentId) => renderPaymentReceipt({ db, keyring: resources.keyring, pdf: resources.pdf, documents }, paymentId),
    // Dunning
    takeDunningStep: (organizationId, invoiceId) => takeDueDunningStep(db, organizationId, invoiceId),
    renderReminder: (reminderId) =>
      renderReminderDocument({ db, keyring: resources.keyring, pdf: resources.pdf, documents, ...(resources.payBaseUrl ? { payBaseUrl: resources.payBaseUrl } : {}) }, reminderId),
    deliverReminder: (reminderId) => deliverReminder({ ...delivery, ...(resources.payBaseUrl ? { payBaseUrl: resources.payBaseUrl } : {}) }, reminderId),
    // Collection cases
    takeCaseStep: (organizationId, caseId) => takeDueCaseStep(db, organizationId, caseId),
    renderCasePaakrav: (organizationId, caseId, sentOn) =>
      renderCasePaakrav({ db, keyring: resources.keyring, pdf: resources.pdf, documents }, organizationId, caseId, sentOn),
    deliverCasePaakrav: (organizationId, caseId, documentSha256) => deliverCasePaakrav(delivery, organizationId, caseId, documentSha256),
    // The document (with any CPR number) goes only to the partner: it is built here and never returned to the journal.
    handOverCase: async (organizationId, caseId, handedOverOn) => {
      // The interest accrued up to the hand-over is posted first (once, however often this runs), so the document has it.
      if (await db.read((sql) => awaitsHandOver(sql, organizationId, caseId))) {
        await db.tx((tx) => postInterestAtHandOver(tx, organizationId, caseId, handedOverOn));
      }
      const doc = await db.read(async (sql) =>
        (await awaitsHandOver(sql, organizationId, caseId)) ? loadHandOverDocument(sql, resources.keyring, organizationId, caseId, handedOverOn) : undefined,
      );
      if (!doc) return { reference: null };
      await archiveHandOver(db, documents, resources.keyring, organizationId, caseId, handOverFileContent(doc));
      const { reference } = await collectionPartner().handOver(doc);
      return { reference };
    },
    recordCaseHandOver: (organizationId, caseId) => recordCaseHandOver(db, organizationId, caseId),
    // Subscriptions: one due period per call, reserved under the lease; its issue stored under a key of its own.
    runSubscriptionPeriod: (organizationId, subscriptionId) =>
      db.tx((tx) =>
        runScheduledPeriod(
          tx,
          {
            keyring: resources.keyring,
            clock,
            requestKey: (id, periodStart) => ({
              idempotencyKey: `subscription-run:${id}:${periodStart}`,
              requestHash: resources.keyring.mac(`subscription-run\n${organizationId}\n${id}\n${periodStart}`),
            }),
          },
          organizationId,
          subscriptionId,
        ),
      ),
    // Customer portal sign-in links
    mailPortalSignInLink: (linkId) => mailSignInLink(delivery, linkId),
    // Webhooks
    deliverWebhook: (deliveryId) => deliverWebhook(webhooks, deliveryId),
    fanOutAndDeliver: (eventId, organizationId) => fanOutAndDeliver(webhooks, eventId, organizationId),
  });
}
