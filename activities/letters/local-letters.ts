/**
 * The letter service of a developer's machine: each letter becomes `<id>.pdf` (the document, byte for byte) and
 * `<id>.json` (the sidecar: letter id, organisation, document SHA-256, recipient address, created time) in one
 * directory, DATA_DIR/letters. Nothing is printed or posted.
 *
 * Idempotent: a letter whose sidecar exists with the same document is reported as sent again, not written twice; the
 * same id with another document is refused (an id names one letter). Files appear whole or not at all (written aside,
 * then renamed), and the sidecar is written last, so a letter without its sidecar is one a crash interrupted: it is
 * written again.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from '../../services/shared/crypto.ts';
import { DomainError } from '../../services/shared/errors.ts';
import type { Letter, LetterLog, LetterService } from '../../services/letters/letter-port.ts';

/** The sidecar written next to each letter's PDF. */
export interface LetterSidecar {
  id: string;
  organizationId: string;
  documentSha256: string;
  recipient: Letter['recipient'];
  createdAt: string;
}

export interface LocalLetterOptions {
  /** The sidecar's createdAt; tests pass a fixed clock. */
  now?: () => Date;
}

const LETTER_ID = /^[A-Za-z0-9][A-Za-z0-9-]{0,99}$/;

async function writeWhole(path: string, bytes: Buffer | string): Promise<void> {
  const aside = `${path}.${randomUUID()}.tmp`;
  try {
    await writeFile(aside, bytes, { flag: 'wx' });
    await rename(aside, path);
  } catch (err) {
    await rm(aside, { force: true });
    throw err;
  }
}

async function readSidecar(path: string): Promise<LetterSidecar | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LetterSidecar;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

export function createLocalLetterService(dir: string, log: LetterLog, opts: LocalLetterOptions = {}): LetterService {
  const now = opts.now ?? (() => new Date());
  // Two sends of one letter in this process share one write; across processes the sidecar decides.
  const inFlight = new Map<string, Promise<{ reference: string }>>();

  const store = async (letter: Letter): Promise<{ reference: string }> => {
    if (!LETTER_ID.test(letter.id)) throw new TypeError(`letter id ${JSON.stringify(letter.id)} cannot name a file`);
    if (sha256(letter.pdf).toString('hex') !== letter.documentSha256) throw new TypeError('the letter PDF does not match its documentSha256');
    await mkdir(dir, { recursive: true });
    const pdfPath = join(dir, `${letter.id}.pdf`);
    const sidecarPath = join(dir, `${letter.id}.json`);
    const existing = await readSidecar(sidecarPath);
    if (existing) {
      if (existing.documentSha256 !== letter.documentSha256) {
        throw new DomainError('letter_rejected', `letter ${letter.id} was already posted with another document`);
      }
      log('info', 'letter already kept as a file', { letterId: letter.id, storedAt: pdfPath });
      return { reference: letter.id };
    }
    const sidecar: LetterSidecar = {
      id: letter.id,
      organizationId: letter.organizationId,
      documentSha256: letter.documentSha256,
      recipient: { ...letter.recipient },
      createdAt: now().toISOString(),
    };
    await writeWhole(pdfPath, letter.pdf);
    await writeWhole(sidecarPath, `${JSON.stringify(sidecar, null, 2)}\n`);
    // The recipient is personal data: the log names the letter and the file, not the address.
    log('info', 'letter kept as a file (not posted)', { letterId: letter.id, organizationId: letter.organizationId, storedAt: pdfPath });
    return { reference: letter.id };
  };

  return {
    send(letter) {
      const running = inFlight.get(letter.id);
      if (running) return running;
      const started = store(letter).finally(() => inFlight.delete(letter.id));
      inFlight.set(letter.id, started);
      return started;
    },
  };
}
