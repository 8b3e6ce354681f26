import QRCode from 'qrcode';

/**
 * The QR code of a payment link on a document (docs/bank-payments.md): SVG from the `qrcode` encoder, error correction
 * level M (15 % of the code may be damaged or smudged on paper and it still reads), the standard's quiet zone of four
 * modules. Nothing is fetched: the SVG goes into the page as a data: URL, like the logo, so the template places it
 * with `{{ }}` as every other value and the markup itself never passes through the template unescaped.
 */
export const QR_CODE_OPTIONS = { type: 'svg', errorCorrectionLevel: 'M' } as const;

/**
 * The SVG of `text`'s QR code. The templates are synchronous; the encoder calls its callback before it returns (it
 * encodes and draws in one go), and a callback that did not run would be an error here rather than a missing code.
 */
export function qrCodeSvg(text: string): string {
  let svg: string | undefined;
  let failure: Error | null | undefined;
  QRCode.toString(text, QR_CODE_OPTIONS, (error, out) => {
    failure = error;
    svg = out;
  });
  if (failure) throw failure;
  if (svg === undefined) throw new Error('the QR encoder did not answer at once');
  return svg;
}

/** The QR code of `text` as a data: URL for an <img>. */
export const qrCodeDataUrl = (text: string): string => `data:image/svg+xml;base64,${Buffer.from(qrCodeSvg(text), 'utf8').toString('base64')}`;
