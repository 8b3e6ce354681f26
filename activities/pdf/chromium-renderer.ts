import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { recordPdfRender } from '../../services/observability/metrics.ts';
import type { DocumentKind, DocumentViews, PdfRenderer } from '../../services/documents/pdf-renderer.ts';
import { Semaphore } from '../../services/shared/semaphore.ts';
import { documentHtml } from './document-templates.ts';

/**
 * PDF rendering with headless Chromium (Debian's package, driven by playwright-core).
 *
 * One browser per process, launched on the first render and kept warm: a launch costs a few hundred milliseconds
 * and a render a fraction of that. At most `poolSize` pages exist and render at once; further renders wait in a
 * FIFO queue, so a burst of issues costs waiting time, never memory. If the browser dies, the next render launches
 * a new one (a render that was running when it died is retried once on the new browser).
 *
 * Pages run without JavaScript and without network: every request but data: URLs is aborted. Documents are
 * self-contained HTML, so nothing a document contains can make the renderer fetch anything.
 */

export const CHROMIUM_ARGS = [
  '--headless',
  // These machines run as root, where Chromium's sandbox cannot start; the pages render only our own escaped HTML
  // with JavaScript and network off.
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const DEFAULT_POOL_SIZE = 2;
const DEFAULT_TIMEOUT_MS = 30_000;
/** A cold start takes about a second on a loaded machine; this bounds a launch that hangs. */
const LAUNCH_TIMEOUT_MS = 30_000;

export interface ChromiumRendererOptions {
  /** Default: /usr/bin/chromium, else `chromium` on PATH. */
  executablePath?: string;
  /** Pages rendering at once (default 2); each costs a renderer process of some tens of MB. */
  poolSize?: number;
  /** Upper bound for one render on a page, HTML to PDF bytes (default 30 s); the page is discarded when it passes. */
  timeoutMs?: number;
}

export interface RendererStats {
  /** Renders holding a page right now, and the most there have been at once. */
  rendering: number;
  peakRendering: number;
  /** Renders waiting for a page. */
  queued: number;
  /** Pages opened since start (reuse keeps this at the pool size while the browser lives). */
  pagesOpened: number;
  launches: number;
  rendered: number;
  /** Requests a document tried to make and the renderer refused. */
  blockedRequests: number;
}

export interface ChromiumRenderer extends PdfRenderer {
  /** Renders self-contained HTML; every document kind's template output goes through it. */
  renderHtml(html: string): Promise<Buffer>;
  stats(): RendererStats;
  /** The running browser's processes (type 'browser', 'renderer', 'GPU', utilities), [] when none runs. */
  processes(): Promise<{ pid: number; type: string }[]>;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Debian's launcher first; `chromium` on PATH for other layouts. No environment variable chooses the binary. */
export function findChromium(): string {
  if (isExecutable('/usr/bin/chromium')) return '/usr/bin/chromium';
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && isExecutable(join(dir, 'chromium'))) return join(dir, 'chromium');
  }
  throw new Error('Chromium was not found (/usr/bin/chromium or chromium on PATH): install the Debian package chromium');
}

interface Slot {
  browser: Browser;
  context: BrowserContext;
  page: Page;
}

class RendererClosedError extends Error {
  constructor() {
    super('the PDF renderer is closed');
    this.name = 'RendererClosedError';
  }
}

class RenderTimeoutError extends Error {
  constructor(ms: number) {
    super(`PDF rendering took longer than ${ms} ms`);
    this.name = 'RenderTimeoutError';
  }
}

export function createChromiumRenderer(options: ChromiumRendererOptions = {}): ChromiumRenderer {
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!Number.isInteger(poolSize) || poolSize < 1) throw new RangeError(`poolSize must be a positive integer, got ${poolSize}`);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new RangeError(`timeoutMs must be a positive integer, got ${timeoutMs}`);

  const gate = new Semaphore(poolSize);
  let browser: Promise<Browser> | undefined;
  let idle: Slot[] = [];
  let closed = false;
  const stats = { rendering: 0, peakRendering: 0, pagesOpened: 0, launches: 0, rendered: 0, blockedRequests: 0 };

  /** The warm browser, launched on first use and again after it died. */
  async function liveBrowser(): Promise<Browser> {
    // Renders that were queued or retrying when close() ran must not launch a browser nobody will close.
    if (closed) throw new RendererClosedError();
    if (browser) {
      const pending = browser;
      const b = await pending;
      if (b.isConnected()) return b;
      // Dead before its 'disconnected' event was handled: forget it here rather than fail on it.
      if (browser === pending) forget();
    }
    browser ??= launch();
    return browser;
  }

  function forget(): void {
    browser = undefined;
    idle = [];
  }

  function launch(): Promise<Browser> {
    const launching = chromium
      .launch({
        executablePath: options.executablePath ?? findChromium(),
        args: CHROMIUM_ARGS,
        timeout: LAUNCH_TIMEOUT_MS,
        // The owning process decides how to shut down (and calls close()); playwright's own SIGINT handler would
        // exit the process. Its exit hook still kills the browser if the process ends without close().
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      })
      .then((b) => {
        stats.launches++;
        // Crashed or killed: its pages are gone with it, and the next render launches a new browser.
        b.on('disconnected', () => {
          if (browser === launching) forget();
        });
        return b;
      });
    void launching.catch(() => {
      if (browser === launching) browser = undefined;
    });
    return launching;
  }

  async function openSlot(): Promise<Slot> {
    const b = await liveBrowser();
    const context = await b.newContext({ javaScriptEnabled: false });
    try {
      await context.route('**/*', async (route) => {
        if (route.request().url().startsWith('data:')) return route.continue();
        stats.blockedRequests++;
        return route.abort('blockedbyclient');
      });
      const page = await context.newPage();
      // renderOn's own timer is the one bound on a render; playwright's would race it and look like a crash.
      page.setDefaultTimeout(0);
      stats.pagesOpened++;
      return { browser: b, context, page };
    } catch (err) {
      await context.close().catch(() => {});
      throw err;
    }
  }

  /** One render on one page; the page goes back to the pool only if it is healthy and its browser still current. */
  async function renderOn(html: string): Promise<Buffer> {
    let slot = idle.pop();
    while (slot && (slot.page.isClosed() || !slot.browser.isConnected())) slot = idle.pop();
    slot ??= await openSlot();
    let healthy = false;
    let timer: NodeJS.Timeout | undefined;
    try {
      const work = (async () => {
        await slot.page.setContent(html, { waitUntil: 'load' });
        return slot.page.pdf({ format: 'A4', printBackground: true, preferCSSPageSize: true });
      })();
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new RenderTimeoutError(timeoutMs)), timeoutMs);
      });
      // The losing side of the race must not become an unhandled rejection once the page is closed under it.
      void work.catch(() => {});
      const pdf = await Promise.race([work, timeout]);
      healthy = true;
      return pdf;
    } finally {
      clearTimeout(timer);
      if (healthy && !closed && slot.browser.isConnected()) {
        idle.push(slot);
      } else {
        await slot.context.close().catch(() => {});
      }
    }
  }

  async function renderHtml(html: string): Promise<Buffer> {
    if (closed) throw new RendererClosedError();
    const wait = gate.acquire();
    if (wait) await wait;
    stats.rendering++;
    stats.peakRendering = Math.max(stats.peakRendering, stats.rendering);
    try {
      let pdf: Buffer;
      try {
        pdf = await renderOn(html);
      } catch (err) {
        // The failed page is already discarded: a page or browser that died under the render (crash, OOM kill) gets
        // one more try on a fresh page, relaunching the browser if needed. A second failure is thrown.
        if (closed || err instanceof RenderTimeoutError) throw err;
        pdf = await renderOn(html);
      }
      stats.rendered++;
      return pdf;
    } finally {
      stats.rendering--;
      gate.release();
    }
  }

  return {
    renderHtml,

    async render<K extends DocumentKind>(kind: K, view: DocumentViews[K]) {
      const started = performance.now();
      const pdf = await renderHtml(documentHtml(kind, view));
      // Successful renders only, by kind (the fixed vocabulary of DocumentViews), waiting for a page included.
      recordPdfRender(kind, (performance.now() - started) / 1000);
      return pdf;
    },

    stats: () => ({ ...stats, queued: gate.queued }),

    async processes() {
      const b = browser && (await browser.catch(() => undefined));
      if (!b?.isConnected()) return [];
      const cdp = await b.newBrowserCDPSession();
      try {
        const info = (await cdp.send('SystemInfo.getProcessInfo')) as { processInfo: { id: number; type: string }[] };
        return info.processInfo.map((p) => ({ pid: p.id, type: p.type }));
      } finally {
        await cdp.detach();
      }
    },

    async close() {
      closed = true;
      const launching = browser;
      browser = undefined;
      idle = [];
      const b = launching && (await launching.catch(() => undefined));
      // Closing the browser ends its processes (playwright waits for the browser process to exit).
      if (b) await b.close();
    },
  };
}
