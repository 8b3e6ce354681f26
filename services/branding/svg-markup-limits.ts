/**
 * Bounds on an SVG logo's markup, checked over the text BEFORE any parser sees it (docs/api-conventions.md,
 * "Branding"). The parsers (jsdom, DOMPurify, librsvg) run on the API's event loop, and their
 * cost grows with the number of elements and the depth of nesting, not with the bytes alone: within the 512 KiB limit
 * a file can hold over 100 000 elements, or nest 50 000 deep (deep enough to exhaust the stack of recursive code). A
 * logo needs neither: real ones have tens to a few hundred elements, nested a handful deep.
 */

/** The most elements an SVG logo may have. */
export const SVG_MAX_ELEMENTS = 5000;
/** The deepest an element may be nested, the root `<svg>` being at depth 1. */
export const SVG_MAX_DEPTH = 100;

const NAME_START = /[A-Za-z_:\u00C0-\uFFFF]/;

/**
 * Counts the element start tags and the nesting depth of an XML text in one pass (linear in its length), and answers
 * the reason to refuse it, or undefined. Comments, CDATA sections and processing instructions are skipped as the XML
 * parser skips them; a declaration (`<!DOCTYPE …>`) is skipped to its first `>`, so markup inside a DTD's internal
 * subset counts (counting too much is safe here, too little would not be). Text that is not well-formed is not judged
 * here: the XML parser refuses it afterwards, and the count stays a bound on what a parser could build from it.
 */
export function svgMarkupOverLimits(text: string): string | undefined {
  let elements = 0;
  let depth = 0;
  let i = text.indexOf('<');
  while (i !== -1) {
    let next: number;
    if (text.startsWith('<!--', i)) {
      next = skipPast(text, '-->', i + 4);
    } else if (text.startsWith('<![CDATA[', i)) {
      next = skipPast(text, ']]>', i + 9);
    } else if (text.startsWith('<?', i)) {
      next = skipPast(text, '?>', i + 2);
    } else if (text.startsWith('<!', i)) {
      next = skipPast(text, '>', i + 2);
    } else if (text.startsWith('</', i)) {
      depth = Math.max(0, depth - 1);
      next = skipPast(text, '>', i + 2);
    } else if (NAME_START.test(text.charAt(i + 1))) {
      const end = endOfTag(text, i + 1);
      elements++;
      if (elements > SVG_MAX_ELEMENTS) return `the SVG has more than ${SVG_MAX_ELEMENTS} elements`;
      if (end === -1 || text.charAt(end - 1) !== '/') {
        depth++;
        if (depth > SVG_MAX_DEPTH) return `the SVG nests elements more than ${SVG_MAX_DEPTH} deep`;
      }
      next = end === -1 ? -1 : end + 1;
    } else {
      next = i + 1;
    }
    i = next === -1 ? -1 : text.indexOf('<', next);
  }
  return undefined;
}

/** The index just after `end` at or after `from`, or -1 when the text ends first. */
function skipPast(text: string, end: string, from: number): number {
  const at = text.indexOf(end, from);
  return at === -1 ? -1 : at + end.length;
}

/** The index of the `>` that ends a start tag, `>` inside quoted attribute values not counting; -1 if none. */
function endOfTag(text: string, from: number): number {
  let quote: string | undefined;
  for (let j = from; j < text.length; j++) {
    const c = text.charAt(j);
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") {
      quote = c;
    } else if (c === '>') {
      return j;
    }
  }
  return -1;
}
