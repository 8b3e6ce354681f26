import createDOMPurify, { type DOMPurify } from 'dompurify';
import { JSDOM } from 'jsdom';
import { svgMarkupOverLimits } from './svg-markup-limits.ts';

/**
 * An uploaded SVG logo made safe to store and to show (docs/api-conventions.md, "Branding"): within the markup limits
 * (svg-markup-limits.ts, checked over the text before any parsing), well-formed XML whose root is an `<svg>` in the SVG
 * namespace, then sanitised by DOMPurify's SVG profile (no `<script>`, no `on*` event
 * attributes, no `foreignObject`, nothing outside the SVG vocabulary) and by the rules below, which take out every
 * reference to something outside the image: `href`/`xlink:href` that is not a fragment (`#id`) or an embedded raster
 * image (`data:image/png|jpeg|gif|webp`); and in CSS (any attribute, `style` too, and `<style>` elements): `url(…)`
 * that does not point at a fragment, `@import`, the functions that load an image or a resource from a string
 * (`image-set()` and its prefixed forms, `image()`, `src()`, `cross-fade()`, `element()`), a quoted string inside any
 * function's parentheses but `url("#…")`, and any CSS escape (which could spell any of these past the checks). An
 * attribute or `<style>` element with one of them is dropped whole.
 *
 * DOMPurify is given the document the XML parser built, not the text: parsing the text a second time with the HTML
 * parser would build another tree from the same bytes (in `<title>`, `<desc>` and `foreignObject` the HTML parser
 * ignores `/>` and nests what XML keeps flat, so the markup limits would not bound it).
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
/** Every CSS function call (a name directly followed by `(`, as CSS tokenises a function), with its name. */
const CSS_FUNCTION = /([-\w]+)\(/g;
/**
 * CSS functions that take an image or a resource by a URL written as a string (or as `var()`, which can hold one),
 * without their vendor prefix: `image-set("https://…" 1x)` fetches as surely as `url(https://…)` does.
 */
const LOADING_FUNCTIONS = new Set(['image-set', 'image', 'src', 'cross-fade', 'element']);

/** CSS (a style attribute, a presentation attribute, a `<style>` element) that fetches nothing from outside. */
export function cssIsSelfContained(css: string): boolean {
  // An escape could spell `url(` or `@import` past the checks below; logos have no need of one.
  if (css.includes('\\')) return false;
  if (/@import/i.test(css)) return false;
  for (const m of css.matchAll(CSS_URL)) if (!m[2]!.startsWith('#')) return false;
  for (const m of css.matchAll(CSS_FUNCTION)) {
    if (LOADING_FUNCTIONS.has(m[1]!.toLowerCase().replace(/^-[a-z]+-/, ''))) return false;
  }
  return !hasStringInFunction(css);
}

/**
 * Whether a quoted string stands inside a function's parentheses (at any depth), other than directly in `url(…)`
 * (which CSS_URL judges). Strings are where a function takes a URL it may fetch; a logo's CSS has them only as values
 * (`font-family: "Open Sans"`), outside parentheses. An unterminated comment counts as one, to be safe.
 */
function hasStringInFunction(css: string): boolean {
  /** The name of each open parenthesis' function ('' for a bare parenthesis), innermost last. */
  const open: string[] = [];
  for (let i = 0; i < css.length; i++) {
    const c = css.charAt(i);
    if (c === '/' && css.charAt(i + 1) === '*') {
      const end = css.indexOf('*/', i + 2);
      if (end === -1) return true;
      i = end + 1;
    } else if (c === '"' || c === "'") {
      // A string ends at its quote, or (unterminated) at a line break, as CSS tokenises it.
      let end = i + 1;
      while (end < css.length && css.charAt(end) !== c && !'\n\r\f'.includes(css.charAt(end))) end++;
      if (open.length > 0 && (open[open.length - 1] !== 'url' || css.charAt(end) !== c)) return true;
      i = end;
    } else if (c === '(') {
      open.push(/([-\w]+)$/.exec(css.slice(Math.max(0, i - 64), i))?.[1]?.toLowerCase() ?? '');
    } else if (c === ')') {
      open.pop();
    }
  }
  return false;
}

/** Takes out what DOMPurify lets through but a self-contained image must not have (see the module comment). */
function removeExternalReferences(root: Element): void {
  // A static list, made in one pass: the live collection getElementsByTagName answers is re-walked as elements are
  // removed, quadratic in their number.
  const elements = [root, ...Array.from(root.querySelectorAll('*'))];
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

/** At most this many `<use>` elements in a logo (design tools write a handful, for symbols). */
export const MAX_SVG_USES = 100;

/**
 * Bounds what `<use>` can multiply: each copies the element it points at, and a chain of them (a `<use>` of a group of
 * `<use>`s of a group …) grows the drawn tree exponentially within the element limit, so that a small logo would stall
 * every PDF it is printed on. So: at most MAX_SVG_USES of them, and none may point at an element that is or holds a
 * `<use>` (no chains, no self-reference); then what is drawn is at most MAX_SVG_USES copies of the image's elements.
 */
function checkUseReferences(svg: Element): void {
  const uses = Array.from(svg.querySelectorAll('use'));
  if (uses.length > MAX_SVG_USES) throw new SvgRejected(`the SVG has more than ${MAX_SVG_USES} <use> elements`);
  const byId = new Map<string, Element>();
  for (const el of Array.from(svg.querySelectorAll('[id]'))) if (!byId.has(el.id)) byId.set(el.id, el);
  for (const use of uses) {
    const href = use.getAttribute('href') ?? use.getAttributeNS(XLINK_NS, 'href');
    const target = href?.trim().startsWith('#') ? byId.get(decodeURIComponent(href.trim().slice(1))) : undefined;
    if (target && (target.localName === 'use' || target.querySelector('use') !== null)) {
      throw new SvgRejected('an SVG <use> may not point at an element that is or holds a <use> of its own');
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
  // Before any parser: what jsdom, DOMPurify and librsvg would spend on it is bounded by the element count and depth.
  const over = svgMarkupOverLimits(text);
  if (over) throw new SvgRejected(over);
  // Then as XML, strictly: an SVG file is an XML document, and anything else is refused rather than guessed at.
  const parsed = new window.DOMParser().parseFromString(text, 'image/svg+xml');
  const error = parsed.getElementsByTagName('parsererror')[0];
  if (error) throw new SvgRejected(`the SVG is not well-formed XML (${(error.textContent ?? '').trim().slice(0, 200)})`);
  const top = parsed.documentElement;
  if (top.localName !== 'svg' || top.namespaceURI !== SVG_NS) {
    throw new SvgRejected(`the root element must be <svg> in the SVG namespace (${SVG_NS})`);
  }
  // DOMPurify sanitises this very tree (see the module comment), imported into its HTML document, where a CDATA
  // section cannot exist: each becomes the text it holds, as XML reads it anyway. Given a node, DOMPurify compares
  // names in lower case against its allow-lists, so SVG's mixed-case names (viewBox, linearGradient) are kept.
  const walker = parsed.createTreeWalker(top, window.NodeFilter.SHOW_CDATA_SECTION);
  const cdata: Node[] = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) cdata.push(node);
  for (const node of cdata) node.parentNode!.replaceChild(parsed.createTextNode(node.nodeValue ?? ''), node);
  const body = purify.sanitize(top, {
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
  checkUseReferences(svg);
  const out = new window.XMLSerializer().serializeToString(svg);
  // What is stored must itself read back as an SVG document.
  const again = new window.DOMParser().parseFromString(out, 'image/svg+xml');
  if (again.getElementsByTagName('parsererror').length > 0 || again.documentElement.namespaceURI !== SVG_NS) {
    throw new SvgRejected('the sanitised SVG is not well-formed XML');
  }
  return Buffer.from(out, 'utf8');
}
