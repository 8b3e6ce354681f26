import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Handlebars from 'handlebars';
import type { Db } from '../../shared/db.ts';
import { abandonStartLink } from '../../start-links/abandon-start-link.ts';
import { completeStartLink } from '../../start-links/complete-start-link.ts';
import { findStartLink, type StartLinkView } from '../../start-links/find-start-link.ts';
import { START_LINK_KINDS, startLinkPagePrefix, type StartLinkKind } from '../../start-links/start-link-kinds.ts';
import { START_LINK_LIFECYCLE } from '../../start-links/start-link-lifecycle.ts';
import { START_LINK_TEXTS } from '../start-link-texts.ts';
import { pickLanguage, TEXTS, type Language } from '../texts.ts';
import { pageCsp, sendHtmlPage } from '../plugins/page-policy.ts';

/**
 * The start links' pages (docs/api-conventions.md, "Start links"), pages of the `test` provider on the pay service:
 * `GET /test-provider/{verification|card-setup|accounting-connection}/{token}` shows the step and for whom, with
 * "Complete" and "Abandon"; the form posts to the same address and the answer is a redirect back to it (a reload
 * never posts twice), which then shows the outcome. A link that has expired, was abandoned or was completed says
 * so; a token that opens nothing, or another kind's, is a 404 page. The token (256 random bits) is the only key:
 * pages are never cached and never pass their address on (Referrer-Policy).
 *
 * Templates are the pay page's: its layout and stylesheet, strict Handlebars with `{{ }}` only, no script.
 */

const hbs = Handlebars.create();
const source = (name: string): string => readFileSync(new URL(`../templates/${name}.hbs`, import.meta.url), 'utf8');
hbs.registerPartial('layout', source('layout'));

interface Layout {
  lang: Language;
  t: (typeof TEXTS)[Language];
  title: string;
  brand: string;
  switchHref: string;
  refreshSeconds: null;
}

interface StepPage {
  testMode: string;
  heading: string;
  intro: string;
  action: string;
  completeLabel: string;
  abandonLabel: string;
  hint: string;
}

interface ResultPage {
  heading: string;
  text: string;
}

const stepTemplate = hbs.compile<Layout & StepPage>(source('start-link'), { strict: true });
const resultTemplate = hbs.compile<Layout & ResultPage>(source('start-link-result'), { strict: true });

const CSP = pageCsp();

export function registerStartLinkPages(app: FastifyInstance, db: Db): void {
  const html = (reply: FastifyReply, status: number, body: string): FastifyReply => sendHtmlPage(reply, status, body, CSP);

  const langOf = (req: FastifyRequest): Language => {
    const q = req.query as Record<string, unknown> | undefined;
    const b = req.body as Record<string, unknown> | undefined;
    return pickLanguage(b?.lang ?? q?.lang, req.headers['accept-language']);
  };

  const layout = (lang: Language, title: string, brand: string, path: string): Layout => ({
    lang, t: TEXTS[lang], title, brand, switchHref: `${path}?lang=${TEXTS[lang].otherLanguage.code}`, refreshSeconds: null,
  });

  const result = (reply: FastifyReply, status: number, lang: Language, brand: string, path: string, heading: string, text: string) =>
    html(reply, status, resultTemplate({ ...layout(lang, heading, brand, path), heading, text }));

  /**
   * The page of a link as it stands. `status` is 200, or 400 after a form without a known outcome, for a link that is
   * open or completed; a gone link (abandoned, expired) is 410 and an unknown one 404 either way.
   */
  const show = (reply: FastifyReply, lang: Language, path: string, kind: StartLinkKind, view: StartLinkView | undefined, status = 200) => {
    const s = START_LINK_TEXTS[lang];
    if (!view || view.kind !== kind) return result(reply, 404, lang, s.serviceName, path, s.notFoundTitle, s.notFoundText);
    const step = s.steps[kind];
    const brand = view.organizationName;
    switch (view.state) {
      case START_LINK_LIFECYCLE.state.completed:
        return result(reply, status, lang, brand, path, step.title, step.completed);
      case START_LINK_LIFECYCLE.state.abandoned:
        return result(reply, 410, lang, brand, path, s.abandonedTitle, s.abandonedText);
      case START_LINK_LIFECYCLE.state.expired:
        return result(reply, 410, lang, brand, path, s.expiredTitle, s.expiredText);
      case START_LINK_LIFECYCLE.state.open:
        return html(reply, status, stepTemplate({
          ...layout(lang, step.title, brand, path),
          testMode: s.testMode,
          heading: step.title,
          intro: step.intro(brand),
          action: path,
          completeLabel: s.complete,
          abandonLabel: s.abandon,
          hint: s.completeHint,
        }));
    }
  };

  for (const kind of Object.keys(START_LINK_KINDS) as StartLinkKind[]) {
    const prefix = startLinkPagePrefix(kind);

    app.get<{ Params: { token: string } }>(`${prefix}/:token`, async (req, reply) => {
      const view = await db.read((sql) => findStartLink(sql, req.params.token));
      return show(reply, langOf(req), `${prefix}/${req.params.token}`, kind, view);
    });

    app.post<{ Params: { token: string }; Body: Record<string, string> | undefined }>(`${prefix}/:token`, async (req, reply) => {
      const { token } = req.params;
      const lang = langOf(req);
      const path = `${prefix}/${token}`;
      const view = await db.read((sql) => findStartLink(sql, token));
      if (!view || view.kind !== kind) return show(reply, lang, path, kind, undefined);
      const outcome = req.body?.outcome;
      if (outcome === 'complete') await db.tx((tx) => completeStartLink(tx, token));
      else if (outcome === 'abandon') await db.tx((tx) => abandonStartLink(tx, token));
      else return show(reply, lang, path, kind, view, 400);
      // Whether this request or an earlier one finished it (or it had expired meanwhile), the page shows how it stands.
      return reply.redirect(`${path}?lang=${lang}`, 303);
    });
  }
}
