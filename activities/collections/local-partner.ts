/**
 * The collection partner of a developer's machine: each hand-over becomes `<caseId>.json` (the hand-over document,
 * pretty JSON) in one directory, DATA_DIR/collections. Nothing leaves the machine. The file holds the debtors' CPR
 * numbers like the partner's copy would: the directory is as sensitive as the partner's inbox.
 *
 * Idempotent and write-once: the same document again (the same handOverId, byte for byte the same content) is the
 * same hand-over and succeeds without writing; other content for a case already handed over is refused for good
 * (DomainError `collection_partner_rejected`), never overwritten. The file appears whole or not at all: it is
 * written aside and then hard-linked into place, which fails instead of replacing a file that is there.
 */
import { randomUUID } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { CollectionPartner, HandOverDocument } from '../../services/collections/partner-port.ts';
import { DomainError } from '../../services/shared/errors.ts';
import { isUuid } from '../../services/shared/ids.ts';

/** Same shape as the workflows' JSON log line (and MailLog, LetterLog), so the endpoint's logger can be passed as it is. */
export type CollectionPartnerLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

/** The file's exact content: the document as pretty JSON with a final newline. */
export const handOverFileContent = (doc: HandOverDocument): string => `${JSON.stringify(doc, null, 2)}\n`;

async function readIfThere(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export function createLocalCollectionPartner(dir: string, log: CollectionPartnerLog): CollectionPartner {
  // Two hand-overs of one case in this process share one write; across processes the link decides.
  const inFlight = new Map<string, Promise<{ reference: string }>>();

  const same = (path: string, existing: string, content: string, doc: HandOverDocument): { reference: string } => {
    if (existing !== content) {
      log('warn', 'hand-over refused: the case was handed over with another document', { handOverId: doc.handOverId, storedAt: path });
      throw new DomainError('collection_partner_rejected', `case ${doc.case.id} was already handed over with another document (${path})`);
    }
    log('info', 'hand-over already kept as a file', { handOverId: doc.handOverId, storedAt: path });
    return { reference: path };
  };

  const store = async (doc: HandOverDocument): Promise<{ reference: string }> => {
    if (!isUuid(doc.case.id)) throw new TypeError(`case id ${JSON.stringify(doc.case.id)} cannot name a file`);
    if (doc.handOverId !== `${doc.organization.id}:${doc.case.id}`) throw new TypeError('the handOverId is not <organisation id>:<case id>');
    await mkdir(dir, { recursive: true });
    const path = join(dir, `${doc.case.id}.json`);
    const content = handOverFileContent(doc);
    const existing = await readIfThere(path);
    if (existing !== undefined) return same(path, existing, content, doc);
    const aside = `${path}.${randomUUID()}.tmp`;
    try {
      await writeFile(aside, content, { flag: 'wx', mode: 0o600 });
      await link(aside, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // Another process handed the case over between the read and the link: its file decides.
      return same(path, (await readIfThere(path)) ?? '', content, doc);
    } finally {
      await rm(aside, { force: true });
    }
    // The document is personal data: the log names the hand-over and the file only.
    log('info', 'hand-over kept as a file (not sent to a partner)', { handOverId: doc.handOverId, storedAt: path });
    return { reference: path };
  };

  return {
    handOver(doc) {
      const running = inFlight.get(doc.handOverId);
      if (running) return running;
      const started = store(doc).finally(() => inFlight.delete(doc.handOverId));
      inFlight.set(doc.handOverId, started);
      return started;
    },
  };
}
