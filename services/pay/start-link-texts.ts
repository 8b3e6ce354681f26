import type { StartLinkKind } from '../start-links/start-link-kinds.ts';
import type { Language } from './texts.ts';

/**
 * The start-link pages' words, in Danish and English (services/start-links: verification, card setup, accounting
 * connection). The pages are the `test` provider's: a person completes or abandons the step with one click, and
 * nothing reaches a real provider.
 */

interface StepTexts {
  title: string;
  intro: (org: string) => string;
  completed: string;
}

interface StartLinkTexts {
  serviceName: string;
  testMode: string;
  complete: string;
  abandon: string;
  completeHint: string;
  abandonedTitle: string;
  abandonedText: string;
  expiredTitle: string;
  expiredText: string;
  notFoundTitle: string;
  notFoundText: string;
  errorTitle: string;
  errorText: string;
  steps: Record<StartLinkKind, StepTexts>;
}

export const START_LINK_TEXTS: Record<Language, StartLinkTexts> = {
  da: {
    serviceName: 'Opsætning af konto',
    testMode: 'Testtilstand: intet sendes til en rigtig udbyder.',
    complete: 'Gennemfør',
    abandon: 'Afbryd',
    completeHint: 'Gennemfør afslutter trinnet. Afbryd lukker linket uden ændringer; der kan bestilles et nyt.',
    abandonedTitle: 'Trinnet er afbrudt',
    abandonedText: 'Der er ikke ændret noget. Bed om et nyt link for at starte igen.',
    expiredTitle: 'Linket er udløbet',
    expiredText: 'Linket virker i 24 timer. Bed om et nyt link for at gennemføre trinnet.',
    notFoundTitle: 'Siden findes ikke',
    notFoundText: 'Linket er forkert. Brug hele linket, som du fik det.',
    errorTitle: 'Noget gik galt',
    errorText: 'Prøv igen om lidt.',
    steps: {
      verification: {
        title: 'Bekræft virksomhedens identitet',
        intro: (org) => `${org} skal bekræfte virksomhedens identitet. Indtil da holdes udbetalinger af kort- og MobilePay-betalinger tilbage.`,
        completed: 'Virksomhedens identitet er bekræftet. Udbetalinger holdes ikke længere tilbage.',
      },
      card_setup: {
        title: 'Opsæt kortfelter',
        intro: (org) => `Opsæt de hostede kortfelter for ${org}, så kunder kan betale med kort.`,
        completed: 'Kortfelterne er sat op og klar til brug.',
      },
      accounting_connection: {
        title: 'Forbind regnskabssystem',
        intro: (org) => `Forbind regnskabssystemet for ${org}, så fakturaer og betalinger bogføres dér.`,
        completed: 'Regnskabssystemet er forbundet.',
      },
    },
  },
  en: {
    serviceName: 'Account setup',
    testMode: 'Test mode: nothing is sent to a real provider.',
    complete: 'Complete',
    abandon: 'Abandon',
    completeHint: 'Complete finishes the step. Abandon closes the link without changes; a new one can be requested.',
    abandonedTitle: 'The step was abandoned',
    abandonedText: 'Nothing was changed. Ask for a new link to start again.',
    expiredTitle: 'This link has expired',
    expiredText: 'A link works for 24 hours. Ask for a new link to complete the step.',
    notFoundTitle: 'Page not found',
    notFoundText: 'The link is wrong. Use the whole link as you received it.',
    errorTitle: 'Something went wrong',
    errorText: 'Please try again shortly.',
    steps: {
      verification: {
        title: 'Verify business identity',
        intro: (org) => `${org} needs to verify the business's identity. Until then, payouts of card and MobilePay payments are held.`,
        completed: 'The business identity is verified. Payouts are no longer held.',
      },
      card_setup: {
        title: 'Set up card fields',
        intro: (org) => `Set up the hosted card fields for ${org}, so that customers can pay by card.`,
        completed: 'The card fields are set up and ready.',
      },
      accounting_connection: {
        title: 'Connect accounting system',
        intro: (org) => `Connect the accounting system of ${org}, so that invoices and payments are booked there.`,
        completed: 'The accounting system is connected.',
      },
    },
  },
};
