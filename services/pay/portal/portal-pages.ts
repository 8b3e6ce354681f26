import { readFileSync } from 'node:fs';
import Handlebars from 'handlebars';
import type { Language } from '../texts.ts';
import { PORTAL_TEXTS, type PortalTexts } from './portal-texts.ts';

/**
 * The portal's HTML, built like the pay page's (services/pay/pages.ts): words and formats in TypeScript, templates
 * only place strings with `{{ }}` (so every value is escaped), strict mode, no script. A layout of its own: the
 * organisation's logo, palette and accent.
 */

const hbs = Handlebars.create();
const source = (name: string): string => readFileSync(new URL(`../templates/${name}.hbs`, import.meta.url), 'utf8');
hbs.registerPartial('portal-layout', source('portal-layout'));
hbs.registerPartial('portal-invoice-item', source('portal-invoice-item'));
const compile = (name: string) => hbs.compile(source(name), { strict: true });

export const PORTAL_CSS = readFileSync(new URL('../assets/portal.css', import.meta.url));

/** The portal's palettes (contracts/customer-portal.ts); portal.css defines each. */
export const PALETTES = [
  'smoer', 'lys', 'beton', 'sand', 'graa', 'mint', 'blaa', 'is', 'groen', 'varm', 'lavendel', 'rosa',
  'moerk', 'midnat', 'grafit', 'skov', 'espresso', 'vin',
] as const;

export interface PortalLayout {
  lang: Language;
  title: string;
  orgName: string;
  /** "Customer portal" under the organisation's name (not on the page of a portal there is not). */
  showService: boolean;
  palette: string;
  logoSrc: string | null;
  cssHref: string;
  themeHref: string;
  switchHref: string;
  signOut: { action: string; csrf: string } | null;
}

export interface InvoiceItem {
  number: number;
  heading: string;
  issueDate: string;
  dueDate: string;
  total: string;
  balance: string;
  status: string;
  pdfHref: string;
  pdfLabel: string;
  payHref: string | null;
  payLabel: string;
  payShort: string;
}

export interface SubscriptionItem {
  id: string;
  name: string;
  status: string;
  nextInvoice: string;
  price: string;
  actions: { href: string; label: string; short: string; style: 'primary' | 'secondary' }[];
}

export interface CustomerSection {
  name: string;
  outstanding: string;
  overdue: string;
  credit: string | null;
  open: InvoiceItem[];
  paid: InvoiceItem[];
  subscriptions: SubscriptionItem[];
}

interface Models {
  'portal-sign-in': { notice: string | null; intro: string; action: string; email: string; error: string | null };
  'portal-message': { heading: string; text: string; linkHref: string | null; linkText: string };
  'portal-confirm': { text: string; action: string; confirm: string };
  'portal-home': { notice: string | null; csrf: string; selfService: boolean; showCustomerNames: boolean; customers: CustomerSection[] };
}

const templates = {
  'portal-sign-in': compile('portal-sign-in'),
  'portal-message': compile('portal-message'),
  'portal-confirm': compile('portal-confirm'),
  'portal-home': compile('portal-home'),
};

export function renderPortalPage<K extends keyof Models>(kind: K, layout: PortalLayout, model: Models[K]): string {
  const t: PortalTexts = PORTAL_TEXTS[layout.lang];
  const palette = (PALETTES as readonly string[]).includes(layout.palette) ? layout.palette : 'lys';
  return templates[kind]({ ...layout, palette, t, ...model });
}

/**
 * The organisation's primary colour as the accent, with black or white text on it, whichever contrasts more (WCAG
 * relative luminance): any colour an organisation picks stays readable on its buttons. Empty without a colour.
 */
export function themeCss(primaryColor: string | null): string {
  if (!primaryColor || !/^#[0-9a-fA-F]{6}$/.test(primaryColor)) return '';
  const channel = (i: number) => {
    const s = parseInt(primaryColor.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const lum = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  const text = (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) ? '#000000' : '#ffffff';
  return `body.portal { --accent: ${primaryColor.toLowerCase()}; --accent-text: ${text}; }\n`;
}
