/**
 * Just enough of RFC 5322 / MIME to check what the mailers produce, written here because no mail parser is installed:
 * unfolded headers with encoded words decoded, multipart trees, base64 and quoted-printable bodies.
 */

export interface MimePart {
  /** Header names lower-cased; values unfolded and decoded (RFC 2047), in order of appearance. */
  headers: Map<string, string[]>;
  contentType: string;
  params: Record<string, string>;
  /** Decoded body bytes (empty for multipart containers). */
  body: Buffer;
  parts: MimePart[];
}

export function header(part: MimePart, name: string): string | undefined {
  const values = part.headers.get(name.toLowerCase());
  if (values !== undefined && values.length > 1) throw new Error(`header ${name} appears ${values.length} times`);
  return values?.[0];
}

export function decodeEncodedWords(value: string): string {
  // Whitespace between two adjacent encoded words is not part of the text (RFC 2047 section 6.2).
  const joined = value.replace(/(\?=)\s+(=\?)/g, '$1$2');
  return joined.replace(/=\?([^?]+)\?([QqBb])\?([^?]*)\?=/g, (_all, _charset: string, enc: string, text: string) => {
    if (enc.toUpperCase() === 'B') return Buffer.from(text, 'base64').toString('utf8');
    return decodeQuotedPrintable(text.replace(/_/g, ' ')).toString('utf8');
  });
}

/** `text` holds one byte per character (latin1), as the message is read. */
function decodeQuotedPrintable(text: string): Buffer {
  const unwrapped = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < unwrapped.length; i++) {
    const c = unwrapped[i]!;
    if (c === '=' && /^[0-9A-Fa-f]{2}$/.test(unwrapped.slice(i + 1, i + 3))) {
      bytes.push(parseInt(unwrapped.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(c.charCodeAt(0));
    }
  }
  return Buffer.from(bytes);
}

function parseParams(value: string): { value: string; params: Record<string, string> } {
  const [first, ...rest] = value.split(';');
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    params[p.slice(0, eq).trim().toLowerCase()] = p.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
  }
  return { value: (first ?? '').trim().toLowerCase(), params };
}

export function parseMime(raw: Buffer): MimePart {
  return parseLatin1(raw.toString('latin1'));
}

function parseLatin1(text: string): MimePart {
  const split = /\r?\n\r?\n/.exec(text);
  const head = split ? text.slice(0, split.index) : text;
  const bodyText = split ? text.slice(split.index + split[0].length) : '';
  const headers = new Map<string, string[]>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon < 1) throw new Error(`not a header line: ${line}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = decodeEncodedWords(Buffer.from(line.slice(colon + 1).trim(), 'latin1').toString('utf8'));
    headers.set(name, [...(headers.get(name) ?? []), value]);
  }
  const ct = parseParams(headers.get('content-type')?.[0] ?? 'text/plain');
  const part: MimePart = { headers, contentType: ct.value, params: ct.params, body: Buffer.alloc(0), parts: [] };
  if (ct.value.startsWith('multipart/')) {
    const boundary = ct.params.boundary;
    if (!boundary) throw new Error('multipart without a boundary');
    const sections = bodyText.split(new RegExp(`\\r?\\n?--${boundary.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    // sections[0] is the preamble; the last one starts with "--" (the closing delimiter) and holds the epilogue.
    for (const s of sections.slice(1)) {
      if (s.startsWith('--')) break;
      part.parts.push(parseLatin1(s.replace(/^[ \t]*\r?\n/, '')));
    }
    return part;
  }
  const encoding = (headers.get('content-transfer-encoding')?.[0] ?? '7bit').toLowerCase();
  if (encoding === 'base64') part.body = Buffer.from(bodyText.replace(/\s+/g, ''), 'base64');
  else if (encoding === 'quoted-printable') part.body = decodeQuotedPrintable(bodyText);
  else part.body = Buffer.from(bodyText, 'latin1');
  return part;
}

/** The leaf parts of the tree, depth first. */
export function leaves(part: MimePart): MimePart[] {
  return part.parts.length === 0 ? [part] : part.parts.flatMap(leaves);
}

/** The one leaf of that content type; fails when there is none or more than one. */
export function onlyLeaf(root: MimePart, contentType: string): MimePart {
  const found = leaves(root).filter((p) => p.contentType === contentType);
  if (found.length !== 1) throw new Error(`expected one ${contentType} part, found ${found.length}`);
  return found[0]!;
}
