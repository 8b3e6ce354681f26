import { createCipheriv } from 'node:crypto';

/**
 * AES-256-GCM decryption of many stored values in one go, for reads that decrypt a column on every row of a page.
 *
 * Same algorithm, same stored format and the same guarantees as one `createDecipheriv` per value (the keyring's
 * `decrypt`): every value's tag is checked over its ciphertext before any plaintext of the batch is handed out, and
 * a value that fails makes the whole call throw. What differs is the cost. Node's decipher costs about 7–10 µs per
 * value whatever its length (a native cipher context with its key schedule and GHASH tables set up per call, and four
 * crossings into C++), which made decryption the largest single cost of a 50-customer page. Here all the AES work of a
 * batch is one call of a long-lived AES-256-ECB cipher (native, AES-NI) on the counter blocks GCM would encrypt; GHASH,
 * GCM's authenticator, is computed in JavaScript with a table of H·x^i made once per key.
 *
 * GCM for a 96-bit nonce N (NIST SP 800-38D): J0 = N ‖ 0^31 ‖ 1; the keystream is E(J0 + 1), E(J0 + 2), …; the tag is
 * GHASH_H(C, padded ‖ [0]64 ‖ [bits of C]64) ⊕ E(J0), with H = E(0^128). ECB of distinct counter blocks is exactly
 * what GCM's counter mode computes, so nothing about the key's use changes.
 *
 * Side channels: the GHASH multiplication touches every entry of its table in the same order and selects with masks,
 * never with data-dependent indices or branches, so its timing and memory access pattern do not depend on H, the
 * ciphertext or the plaintext; the tag comparison accumulates differences without an early exit.
 */

/** Stored layout, as the keyring writes it: [version 1][nonce 12][ciphertext][tag 16]. */
const VERSION = 1;
const HEADER = 13;
const TAG = 16;

export type BatchDecrypt = (blobs: readonly (Buffer | null)[]) => (string | null)[];

export function createBatchDecrypt(encKey: Buffer): BatchDecrypt {
  const ecb = createCipheriv('aes-256-ecb', encKey, null);
  // Input is always whole blocks, so ECB never buffers between calls and the cipher can serve every batch.
  ecb.setAutoPadding(false);
  const h = ecb.update(Buffer.alloc(16));

  /*
   * V[4i..4i+3] = H·x^i as four big-endian 32-bit words (GCM's bit order: bit 0 is the most significant bit of the
   * first byte). X·H is then the XOR of V_i over the bits x_i set in X: SP 800-38D's Algorithm 1 with its V sequence,
   * which depends on H alone, computed once.
   */
  const V = new Int32Array(512);
  let v0 = h.readInt32BE(0);
  let v1 = h.readInt32BE(4);
  let v2 = h.readInt32BE(8);
  let v3 = h.readInt32BE(12);
  for (let i = 0; i < 128; i++) {
    V[4 * i] = v0;
    V[4 * i + 1] = v1;
    V[4 * i + 2] = v2;
    V[4 * i + 3] = v3;
    // V·x: a right shift of the 128-bit string, reduced by R = 0xE1 ‖ 0^120 when a bit falls off the end.
    const carry = -(v3 & 1);
    v3 = (v3 >>> 1) | (v2 << 31);
    v2 = (v2 >>> 1) | (v1 << 31);
    v1 = (v1 >>> 1) | (v0 << 31);
    v0 = (v0 >>> 1) ^ (0xe1000000 & carry);
  }

  // The GHASH state Y, multiplied in place by H.
  let y0 = 0;
  let y1 = 0;
  let y2 = 0;
  let y3 = 0;
  const timesH = (): void => {
    let z0 = 0;
    let z1 = 0;
    let z2 = 0;
    let z3 = 0;
    let k = 0;
    for (let w = 0; w < 4; w++) {
      let x = w === 0 ? y0 : w === 1 ? y1 : w === 2 ? y2 : y3;
      for (let b = 0; b < 32; b++) {
        // All ones when the word's top bit is set, else zero.
        const m = x >> 31;
        x <<= 1;
        z0 ^= V[k]! & m;
        z1 ^= V[k + 1]! & m;
        z2 ^= V[k + 2]! & m;
        z3 ^= V[k + 3]! & m;
        k += 4;
      }
    }
    y0 = z0;
    y1 = z1;
    y2 = z2;
    y3 = z3;
  };

  /** The big-endian word of `b` at `o`, bytes at or past `end` read as zero (the last block's padding). */
  const word = (b: Buffer, o: number, end: number): number =>
    o + 4 <= end
      ? (b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!
      : ((o < end ? b[o]! : 0) << 24) | ((o + 1 < end ? b[o + 1]! : 0) << 16) | ((o + 2 < end ? b[o + 2]! : 0) << 8) | (o + 3 < end ? b[o + 3]! : 0);

  return (blobs) => {
    // One counter block for the tag (J0) and one per ciphertext block, for every value.
    let blocks = 0;
    let textBytes = 0;
    for (const blob of blobs) {
      if (blob === null) continue;
      if (blob[0] !== VERSION) throw new Error(`unknown ciphertext version ${blob[0]}`);
      if (blob.length < HEADER + TAG) throw new Error('Unsupported state or unable to authenticate data');
      const len = blob.length - HEADER - TAG;
      blocks += 1 + Math.ceil(len / 16);
      textBytes += len;
    }
    const counters = Buffer.allocUnsafe(blocks * 16);
    let o = 0;
    for (const blob of blobs) {
      if (blob === null) continue;
      const n = 1 + Math.ceil((blob.length - HEADER - TAG) / 16);
      for (let c = 1; c <= n; c++) {
        for (let j = 0; j < 12; j++) counters[o + j] = blob[1 + j]!;
        counters.writeUInt32BE(c, o + 12);
        o += 16;
      }
    }
    const stream = ecb.update(counters);

    // Every tag is checked before any plaintext is made.
    o = 0;
    for (const blob of blobs) {
      if (blob === null) continue;
      const end = blob.length - TAG;
      y0 = y1 = y2 = y3 = 0;
      for (let p = HEADER; p < end; p += 16) {
        y0 ^= word(blob, p, end);
        y1 ^= word(blob, p + 4, end);
        y2 ^= word(blob, p + 8, end);
        y3 ^= word(blob, p + 12, end);
        timesH();
      }
      // The length block: no additional data, then the ciphertext's length in bits (64-bit big-endian).
      const bits = (end - HEADER) * 8;
      y2 ^= Math.floor(bits / 0x1_0000_0000);
      y3 ^= bits | 0;
      timesH();
      const diff =
        (y0 ^ stream.readInt32BE(o) ^ blob.readInt32BE(end)) |
        (y1 ^ stream.readInt32BE(o + 4) ^ blob.readInt32BE(end + 4)) |
        (y2 ^ stream.readInt32BE(o + 8) ^ blob.readInt32BE(end + 8)) |
        (y3 ^ stream.readInt32BE(o + 12) ^ blob.readInt32BE(end + 12));
      if (diff !== 0) throw new Error('Unsupported state or unable to authenticate data');
      o += 16 * (1 + Math.ceil((end - HEADER) / 16));
    }

    const plain = Buffer.allocUnsafe(textBytes);
    const out: (string | null)[] = new Array<string | null>(blobs.length);
    o = 0;
    let at = 0;
    for (let i = 0; i < blobs.length; i++) {
      const blob = blobs[i];
      if (!blob) {
        out[i] = null;
        continue;
      }
      const len = blob.length - HEADER - TAG;
      for (let j = 0; j < len; j++) plain[at + j] = blob[HEADER + j]! ^ stream[o + 16 + j]!;
      out[i] = plain.toString('utf8', at, at + len);
      at += len;
      o += 16 * (1 + Math.ceil(len / 16));
    }
    // The plaintext bytes are gone from the scratch buffers once read out (the strings are the only copy).
    plain.fill(0);
    stream.fill(0);
    return out;
  };
}
