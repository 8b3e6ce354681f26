import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The official validation of e-invoices, offline: vendor/einvoice/validate.sh (UBL 2.1 XSD with xmllint, then the
 * profile's schematron rules as compiled XSLT on Saxon-HE). One call validates many documents in one JVM run, which
 * is what makes it affordable: compiling the rule XSLTs takes seconds, applying them to one more document a tenth
 * of one. So tests collect the documents they produce and validate them together.
 */
export type ValidatorProfile = 'peppol' | 'oioubl';

export interface Finding {
  id: string;
  location: string;
  text: string;
}

export interface ValidationResult {
  /** The name the document was passed under. */
  name: string;
  valid: boolean;
  fatal: Finding[];
  warnings: number;
}

const VALIDATE = resolve(import.meta.dirname, '../../vendor/einvoice/validate.sh');

/** The validator's profile for an API profile (`peppol-bis-3` → `peppol`). */
export const validatorProfile = (profile: 'peppol-bis-3' | 'oioubl'): ValidatorProfile => (profile === 'oioubl' ? 'oioubl' : 'peppol');

/**
 * Validates every document in one run and answers one result per document, in the order given. A tool or kit error
 * (exit 2: no Java, no xmllint, a broken kit) throws, and so does output that does not name a RESULT for every
 * document, so the check cannot pass because nothing ran.
 */
export async function validateEInvoices(profile: ValidatorProfile, docs: { name: string; xml: Buffer | string }[]): Promise<ValidationResult[]> {
  if (docs.length === 0) throw new Error('nothing to validate');
  const dir = mkdtempSync(join(tmpdir(), 'einvoice-test-'));
  try {
    const files = docs.map((doc, i) => {
      const file = join(dir, `${String(i).padStart(4, '0')}.xml`);
      writeFileSync(file, doc.xml);
      return file;
    });
    const { code, stdout, stderr } = await run(VALIDATE, ['-q', profile, ...files]);
    if (code !== 0 && code !== 1) throw new Error(`validate.sh ${profile} exited ${code}: ${stderr}`);
    const results = parseReport(stdout);
    return files.map((file, i) => {
      const result = results.get(file);
      if (!result) throw new Error(`validate.sh reported nothing for ${docs[i]!.name}:\n${stdout}\n${stderr}`);
      return { name: docs[i]!.name, ...result };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A readable list of the documents that failed, with their fatal findings, for an assertion message. */
export function describeFailures(results: ValidationResult[]): string {
  return results
    .filter((r) => !r.valid)
    .map((r) => `${r.name}:\n${r.fatal.map((f) => `  ${f.id} ${f.location} ${f.text}`).join('\n')}`)
    .join('\n');
}

/** validate.sh's blocks: `# FILE <path> (…)`, FATAL/WARNING lines, `RESULT VALID|INVALID fatal=n warnings=n <path>`. */
function parseReport(stdout: string): Map<string, Omit<ValidationResult, 'name'>> {
  const results = new Map<string, Omit<ValidationResult, 'name'>>();
  let fatal: Finding[] = [];
  for (const line of stdout.split('\n')) {
    if (line.startsWith('# FILE ')) fatal = [];
    const finding = /^FATAL (\S+) (\S+) ?(.*)$/.exec(line);
    if (finding) fatal.push({ id: finding[1]!, location: finding[2]!, text: finding[3]! });
    const result = /^RESULT (VALID|INVALID) fatal=(\d+) warnings=(\d+) (.+)$/.exec(line);
    if (result) {
      if (Number(result[2]) !== fatal.length) throw new Error(`validate.sh counted ${result[2]} fatal findings but listed ${fatal.length}`);
      results.set(result[4]!, { valid: result[1] === 'VALID', fatal, warnings: Number(result[3]) });
    }
  }
  return results;
}

function run(cmd: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code, stdout, stderr }));
  });
}
