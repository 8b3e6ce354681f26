import { randomBytesPooled } from './crypto.ts';

/**
 * UUIDv7 (RFC 9562): 48-bit millisecond timestamp, then randomness. Ids sort by creation time, which keeps
 * B-tree inserts local and gives every list a natural, stable keyset order.
 */
let lastMs = 0;
let seq = 0;

export function uuidv7(now: number = Date.now()): string {
  const b = randomBytesPooled(16);
  // Monotonic within a process: a 12-bit counter in rand_a when several ids share one millisecond.
  if (now <= lastMs) {
    seq = (seq + 1) & 0xfff;
    if (seq === 0) lastMs += 1;
    now = lastMs;
  } else {
    lastMs = now;
    seq = b.readUInt16BE(6) & 0x7ff;
  }
  b.writeUIntBE(now, 0, 6);
  b[6] = 0x70 | (seq >> 8);
  b[7] = seq & 0xff;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string): boolean => UUID_RE.test(s);
