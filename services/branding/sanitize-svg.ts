import createDOMPurify, { type DOMPurify } from 'dompurify';
import { JSDOM } from 'jsdom';

/**
 * An uploaded SVG logo made safe to store and to show (settings-and-batch.md, "Branding"): well-formed XML whose root
 * is an `<svg>` in the SVG namespace, then sanitised by DOMPurify's SVG profile (no `<script>`, no `on*` event
 * attributes, no `foreignObject`, nothing outside the SVG vocabulary) and by the rules below, which take out every
 * reference to something outside the image: `href`/`xlink:href` that is not a fragment (`#id`) or an embedded raster
 * image (`data:image/png|jpeg|gif|webp`), `url(…)` that does not point at a fragment (in any attribute, `style` too,
 * and in `<style>` elements), and CSS `@import`. A `<style>` element or `style` attribute with such a reference (or a
 * CSS escape, which could spell one) is dropped whole.
 *
 * The result is serialised as XML again: what is stored, hashed and served is the sanitised text, never the upload.
 */

export class SvgRejected extends Error {}

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';

// One window and one DOMPurify for the process: both are reusable, and a window costs tens of milliseconds to make.
let shared: { window: JSDOM['window']; purify: DOMPurify } | undefined;
function env(): { window: JSDOM['window']; purify: DOMPurify } {
  if (!shared) {
    const { window } = new JSDOM('');
    shared = { window, purify: createDOMPurify(window) };
  }
  return shared;
}

/** A reference that stays inside the image: a fragment, or a raster image embedded as data. */
const LOCAL_HREF = /^\s*(#|data:image\/(png|jpeg|gif|webp)[;,])/i;
/** Every `url(` with what it points at (quotes and blanks allowed, as CSS allows them). */
const CSS_URL = /url\s*\(\s*(['"]?)\s*([^'")\s]*)/gi;

/** CSS (a style attribute, a presentation attribute, a `<style>` element) that fetches nothing from outside. */
export function cssIsSelfContained(css: string): boolean {
  // An escape could spell `url(` or `@import` past the checks below; logos have no need of one.
  if (css.includes('\\')) return false;
  if (/@import/i.test(css)) return false;
  for (const m of css.matchAll(CSS_URL)) if (!m[2]!.startsWith('#')) return false;
  return true;
}

/** Takes out what DOMPurify lets through but a self-contained image must not have (see the module comment). */
function removeExternalReferences(root: Element): void {
  const elements = [root, ...Array.from(root.getElementsByTagName('*'))];
  for (const el of elements) {
    if (el.localName === 'style' && !cssIsSelfContained(el.textContent ?? '')) {
      el.remove();
      continue;
    }
    for (const attr of Array.from(el.attributes)) {
      const isHref = attr.localName === 'href' && (attr.namespaceURI === null || attr.namespaceURI === XLINK_NS);
      if (isHref ? !LOCAL_HREF.test(attr.value) : !cssIsSelfContained(attr.value)) el.removeAttributeNode(attr);
    }
  }
}

export function sanitizeSvg(bytes: Buffer): Buffer {
  const { window, purify } = env();
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new SvgRejected('the SVG is not UTF-8 text');
  }
  // First as XML, strictly: an SVG file is an XML document, and anything else is refused rather than guessed at.
  const parsed = new window.DOMParser().parseFromString(text, 'image/svg+xml');
  const error = parsed.getElementsByTagName('parsererror')[0];
  if (error) throw new SvgRejected(`the SVG is not well-formed XML (${(error.textContent ?? '').trim().slice(0, 200)})`);
  const top = parsed.documentElement;
  if (top.localName !== 'svg' || top.namespaceURI !== SVG_NS) {
    throw new SvgRejected(`the root element must be <svg> in the SVG namespace (${SVG_NS})`);
  }
  // DOMPurify reads its input with the HTML parser, which knows SVG's mixed-case names (viewBox, linearGradient);
  // its XML mode compares them against lower-case allow-lists and would strip them. The XML check above has
  // already refused anything that is not a well-formed SVG document.
  const body = purify.sanitize(text, {
    RETURN_DOM: true,
    USE_PROFILES: { svg: true, svgFilters: true },
    // <use> (references within the image) is kept; the rules below drop any that points outside.
    ADD_TAGS: ['use'],
    FORBID_TAGS: ['foreignObject', 'script'],
  }) as unknown as Element;
  const svgs = Array.from(body.children).filter((el) => el.localName === 'svg' && el.namespaceURI === SVG_NS);
  if (svgs.length !== 1 || body.children.length !== 1) throw new SvgRejected('nothing of the SVG is left after sanitising');
  const svg = svgs[0]!;
  removeExternalReferences(svg);
  const out = new window.XMLSerializer().serializeToString(svg);
  // What is stored must itself read back as an SVG document.
  const again = new window.DOMParser().parseFromString(out, 'image/svg+xml');
  if (again.getElementsByTagName('parsererror').length > 0 || again.documentElement.namespaceURI !== SVG_NS) {
    throw new SvgRejected('the sanitised SVG is not well-formed XML');
  }
  return Buffer.from(out, 'utf8');
}
