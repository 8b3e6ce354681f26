import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { LOGO_MAX_BYTES, LOGO_MAX_PIXELS, type LogoMime } from '../../contracts/branding.ts';
import { DomainError } from '../shared/errors.ts';
import { sanitizeSvg, SvgRejected } from './sanitize-svg.ts';

/** A logo that passed every check, as it is stored: the bytes (an SVG sanitised), their hash and the image's size. */
export interface CheckedLogo {
  mime: LogoMime;
  content: Buffer;
  /** SHA-256 of `content`, lowercase hex. */
  sha256: string;
  width: number;
  height: number;
}

/** The format sharp (libvips) reads from an image's own bytes, for each accepted type. */
const FORMAT_OF: Record<Exclude<LogoMime, 'image/svg+xml'>, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/webp': 'webp' };

const NAMES: Record<LogoMime, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/webp': 'WebP', 'image/svg+xml': 'SVG' };

/** 422 logo_invalid, the reason in the message and at `/data` (where the image is). */
export const logoInvalid = (reason: string): DomainError =>
  new DomainError('logo_invalid', `The logo is not accepted: ${reason}.`, { details: [{ path: '/data', message: reason }] });

/**
 * sharp's options for reading an image's header (`metadata()`, which decodes no pixel). Its default pixel limit
 * (268 megapixels) would make a header that claims more fail as if it were no image at all; without it the size is
 * read and refused by the 4000 × 4000 check with the size named. The full decode that follows keeps a limit
 * (LOGO_MAX_PIXELS squared), and runs only on an image whose header is within it.
 */
const HEADER_ONLY = { limitInputPixels: false } as const;

/** Standard base64 (RFC 4648 section 4), padding optional: the whole string, nothing else. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** The decoded size of a base64 text, known before decoding it. */
const decodedLength = (b64: string): number => Math.floor((b64.replace(/=+$/, '').length * 3) / 4);

/**
 * Checks an uploaded logo (docs/api-conventions.md, "Branding") without touching the database, so the decoding (CPU
 * work, up to 16 megapixels) runs outside any transaction. Throws 422 `logo_invalid` naming the reason when:
 * `data` is not base64; the decoded bytes exceed 512 KiB; they are not an image of the type `mime` names (PNG, JPEG
 * and WebP by their own bytes, as libvips detects them; SVG as well-formed XML with an `<svg>` root); a raster image
 * does not decode completely (truncated or corrupt data); or the image is larger than 4000 × 4000 pixels.
 */
export async function checkLogo(data: string, mime: LogoMime): Promise<CheckedLogo> {
  if (/^data:/i.test(data)) throw logoInvalid('data must be the bare base64 text, without a data: URL prefix');
  if (!BASE64.test(data)) throw logoInvalid('data is not base64 (standard alphabet, no line breaks or blanks)');
  if (decodedLength(data) > LOGO_MAX_BYTES) throw logoInvalid(`the image is larger than ${LOGO_MAX_BYTES} bytes (512 KiB) decoded`);
  const decoded = Buffer.from(data, 'base64');
  if (decoded.length === 0) throw logoInvalid('data decodes to no bytes');

  let content: Buffer;
  let width: number;
  let height: number;
  if (mime === 'image/svg+xml') {
    try {
      content = sanitizeSvg(decoded);
    } catch (err) {
      if (err instanceof SvgRejected) throw logoInvalid(err.message);
      throw err;
    }
    if (content.length > LOGO_MAX_BYTES) throw logoInvalid(`the sanitised SVG is larger than ${LOGO_MAX_BYTES} bytes (512 KiB)`);
    // librsvg (through sharp) gives the size from width/height, else from the viewBox, in CSS pixels. Nothing is
    // rendered here; sharp's default pixel limit would only turn a too large size into "no size" (see HEADER_ONLY).
    const meta = await sharp(content, HEADER_ONLY).metadata().catch(() => undefined);
    if (!meta?.width || !meta.height) throw logoInvalid('the SVG has no size: give it width and height or a viewBox');
    [width, height] = [Math.ceil(meta.width), Math.ceil(meta.height)];
  } else {
    content = decoded;
    const expected = FORMAT_OF[mime];
    // The header first: the type and the size are known before anything is decoded.
    const meta = await sharp(content, HEADER_ONLY).metadata().catch(() => undefined);
    if (!meta) throw logoInvalid(`the data is not a ${NAMES[mime]} image (not an image format recognised from its bytes)`);
    if (meta.format !== expected) throw logoInvalid(`the data is a ${meta.format.toUpperCase()} image, not ${NAMES[mime]} as mime says`);
    // An EXIF orientation turns the stored pixels on display: the size is the one shown.
    width = meta.autoOrient?.width ?? meta.width;
    height = meta.autoOrient?.height ?? meta.height;
    if (!(width > 0 && height > 0)) throw logoInvalid(`the ${NAMES[mime]} image has no size`);
    if (width <= LOGO_MAX_PIXELS && height <= LOGO_MAX_PIXELS) {
      // Integrity: every pixel is decoded, so a truncated or corrupt file is refused, not only a bad header.
      try {
        await sharp(content, { failOn: 'error', limitInputPixels: LOGO_MAX_PIXELS * LOGO_MAX_PIXELS }).stats();
      } catch (err) {
        throw logoInvalid(`the ${NAMES[mime]} image does not decode completely (${(err as Error).message.trim().slice(0, 200)})`);
      }
    }
  }
  if (width > LOGO_MAX_PIXELS || height > LOGO_MAX_PIXELS) {
    throw logoInvalid(`the image is ${width} × ${height} pixels; at most ${LOGO_MAX_PIXELS} × ${LOGO_MAX_PIXELS} are accepted`);
  }
  return { mime, content, sha256: createHash('sha256').update(content).digest('hex'), width, height };
}
