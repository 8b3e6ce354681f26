import { resolve } from 'node:path';
import type { Config } from '../../services/shared/config.ts';
import type { LetterLog, LetterService } from '../../services/letters/letter-port.ts';
import { createHttpLetterService } from './http-letters.ts';
import { createLocalLetterService } from './local-letters.ts';

/**
 * The print-and-post provider's HTTP API when LETTER_API_URL is set; otherwise letters stay on this machine as PDF
 * files with a JSON sidecar under DATA_DIR/letters, and the one log line at start says where, because nothing is posted.
 */
export function createLetterService(config: Pick<Config, 'letterApiUrl' | 'letterApiKey' | 'dataDir'>, log: LetterLog): LetterService {
  if (config.letterApiUrl) {
    if (!config.letterApiKey) throw new Error('LETTER_API_KEY is required with LETTER_API_URL');
    const url = new URL(config.letterApiUrl);
    log('info', 'letters go out through the letter service', { letters: `${url.protocol}//${url.host}` });
    return createHttpLetterService({ url: config.letterApiUrl, apiKey: config.letterApiKey, log });
  }
  const dir = resolve(config.dataDir, 'letters');
  log('info', `LETTER_API_URL is unset: letters are not posted but kept as PDF files in ${dir}`, { letterDir: dir });
  return createLocalLetterService(dir, log);
}
