import { spawn } from 'node:child_process';

/** The text of a PDF as `pdftotext -layout` (Debian's poppler-utils) extracts it, runs of blanks folded to one. */
export function pdfText(pdf: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('pdftotext', ['-layout', '-enc', 'UTF-8', '-', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out.replace(/[ \t]+/g, ' ')) : reject(new Error(`pdftotext exited ${code}: ${err}`))));
    child.stdin.end(pdf);
  });
}
