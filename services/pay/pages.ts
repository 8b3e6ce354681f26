import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import { TEXTS, type Language, type Texts } from './texts.ts';

/**
 * The pay page's HTML. Everything is worded and formatted in TypeScript; the Handlebars templates only place strings,
 * always with `{{ }}`, so every value (the creditor's name included) is HTML-escaped. Strict mode: a field a template
 * names but the model lacks is an error, never an empty spot on the page. Pages load one stylesheet and no script.
 */

const hbs = Handlebars.create();
const source = (name: string): string => readFileSync(new URL(`./templates/${name}.hbs`, import.meta.url), 'utf8');
hbs.registerPartial('layout', source('layout'));
const compile = <T>(name: string) => hbs.compile<T & Layout>(source(name), { strict: true });

export const PAY_CSS = readFileSync(new URL('./assets/pay.css', import.meta.url));

interface Layout {
  lang: Language;
  t: Texts;
  /** The page's <title> before the brand. */
  title: string;
  /** The organisation's name on its invoices' pages; the service's name elsewhere. */
  brand: string;
  /** This page in the other language. */
  switchHref: string;
  refreshSeconds: number | null;
  /** The organisation's logo beside its name (an invoice's pages); null elsewhere. */
  logoSrc: string | null;
}

export interface CodePage {
  code: string;
  error: string | null;
}

export interface InvoicePage {
  heading: string;
  notice: string | null;
  creditor: string;
  invoiceNumber: string;
  dueDate: string;
  total: string;
  balance: string;
  payable: boolean;
  checkoutAction: string;
  settledText: string;
}

export interface ReturnPage {
  heading: string;
  lines: string[];
  tryAgainHref: string | null;
  backHref: string | null;
}

export interface MessagePage {
  heading: string;
  text: string;
  linkHref: string;
  linkText: string;
}

const templates = {
  code: compile<CodePage>('code'),
  invoice: compile<InvoicePage>('invoice'),
  return: compile<ReturnPage>('return'),
  message: compile<MessagePage>('message'),
};

export type LayoutInput = Omit<Layout, 't' | 'refreshSeconds' | 'logoSrc'> & { refreshSeconds?: number; logoSrc?: string | null };

interface Models {
  code: CodePage;
  invoice: InvoicePage;
  return: ReturnPage;
  message: MessagePage;
}

export function renderPage<K extends keyof Models>(kind: K, layout: LayoutInput, model: Models[K]): string {
  const full = { ...layout, refreshSeconds: layout.refreshSeconds ?? null, logoSrc: layout.logoSrc ?? null, t: TEXTS[layout.lang], ...model };
  return (templates[kind] as unknown as (m: Layout & Models[K]) => string)(full);
}
