/**
 * The e-invoice access point of a developer's machine: each delivered document becomes `<sha256>.xml` (the UBL, byte
 * for byte) and `<sha256>.json` (the sidecar `{sender, receiver, profile, documentType, sha256}`) in DATA_DIR/einvoices,
 * named by the document's SHA-256. Nothing leaves the machine.
 *
 * Idempotent: the same document is the same file, so a delivery that runs again writes nothing new. Files appear
 * whole or not at all (written aside, then renamed), and the sidecar is written last.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EInvoiceAccessPoint, EInvoiceLog } from '../../services/einvoices/einvoice-port.ts';

export interface EInvoiceSidecar {
  sender: string;
  receiver: string;
  profile: string;
  documentType: string;
  sha256: string;
}

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

async function exists(path: string): Promise<boolean> {
  try {
    await readFile(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

export function createLocalAccessPoint(dir: string, log: EInvoiceLog): EInvoiceAccessPoint {
  return {
    async deliver(d) {
      if (!/^[0-9a-f]{64}$/.test(d.sha256)) throw new TypeError(`e-invoice hash ${JSON.stringify(d.sha256)} cannot name a file`);
      await mkdir(dir, { recursive: true });
      const sidecarPath = join(dir, `${d.sha256}.json`);
      if (!(await exists(sidecarPath))) {
        await writeWhole(join(dir, `${d.sha256}.xml`), d.document).catch(async (err: unknown) => {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        });
        const sidecar: EInvoiceSidecar = { sender: d.sender, receiver: d.receiver, profile: d.profile, documentType: d.documentType, sha256: d.sha256 };
        await writeWhole(sidecarPath, `${JSON.stringify(sidecar, null, 2)}\n`);
        log('info', 'e-invoice kept as a file (no access point configured)', { organizationId: d.organizationId, sha256: d.sha256 });
      }
      return { reference: d.sha256 };
    },
  };
}
