// One headless Chromium for a test file, driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
// Chromium reads commands from fd 3 and writes replies and events to fd 4, each a JSON message ended by a NUL).
// A page is opened in a tab of its own; what it logs (console calls, uncaught errors, the browser's own log
// entries such as a blocked script) is collected until the page has loaded. One browser started once costs a
// fraction of a browser started per page.
import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/** A loaded page: its DOM serialized, and every message it logged. */
export interface LoadedPage {
  dom: string;
  messages: string[];
  /** The page's viewport as a PNG, when asked for. */
  png: Buffer | null;
}

interface Pending {
  resolve(v: Record<string, unknown>): void;
  reject(e: Error): void;
}

type Listener = (method: string, params: Record<string, unknown>) => void;

/** A running headless Chromium. */
export class Chromium {
  private readonly child: ChildProcess;
  private readonly out: Writable;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listeners = new Map<string, Listener>();
  private buffer = '';
  private log = '';

  private constructor(profileDir: string) {
    this.child = spawn(
      'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--hide-scrollbars',
        `--user-data-dir=${profileDir}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    this.child.stderr?.on('data', (d) => {
      this.log += String(d);
    });
    this.out = this.child.stdio[3] as Writable;
    (this.child.stdio[4] as Readable).on('data', (d) => this.receive(String(d)));
    this.child.on('exit', (code, signal) => {
      const e = new Error(`chromium exited (${code ?? signal}): ${this.log.slice(-2000)}`);
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    });
  }

  /** Start Chromium with a fresh profile in `profileDir`. */
  static async launch(profileDir: string): Promise<Chromium> {
    const c = new Chromium(profileDir);
    await c.send('Browser.getVersion');
    return c;
  }

  private receive(text: string): void {
    this.buffer += text;
    for (let end = this.buffer.indexOf('\0'); end >= 0; end = this.buffer.indexOf('\0')) {
      const msg = JSON.parse(this.buffer.slice(0, end)) as {
        id?: number;
        result?: Record<string, unknown>;
        error?: { message: string };
        method?: string;
        params?: Record<string, unknown>;
        sessionId?: string;
      };
      this.buffer = this.buffer.slice(end + 1);
      if (msg.id !== undefined) {
        const p = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error) p?.reject(new Error(`chromium: ${msg.error.message}`));
        else p?.resolve(msg.result ?? {});
      } else if (msg.method) this.listeners.get(msg.sessionId ?? '')?.(msg.method, msg.params ?? {});
    }
  }

  private send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    this.out.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    return new Promise((resolve, reject) => this.pending.set(id, { resolve, reject }));
  }

  /**
   * Load `url` in a new tab (its viewport `width` × `height`), wait for its load event, and return its DOM, what it
   * logged, and with `screenshot` its viewport as a PNG.
   */
  async load(url: string, o: { width?: number; height?: number; screenshot?: boolean } = {}): Promise<LoadedPage> {
    const [page] = await this.loadEach([{ url, ...o }]);
    return page as LoadedPage;
  }

  /**
   * Load each of `pages` in turn in one new tab, as `load` loads one (one renderer for them all: a tab costs more than
   * a page). What a page logs is collected from its navigation until its DOM (and screenshot) are taken: put a page
   * that logs after its load event last.
   */
  async loadEach(
    pages: readonly { url: string; width?: number; height?: number; screenshot?: boolean }[],
  ): Promise<LoadedPage[]> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    let messages: string[] = [];
    let loaded: () => void = () => {};
    this.listeners.set(sessionId, (method, p) => {
      if (method === 'Page.loadEventFired') loaded();
      else if (method === 'Runtime.consoleAPICalled') {
        const args = (p.args as { value?: unknown; description?: string }[]).map((a) => a.description ?? String(a.value));
        messages.push(`console.${String(p.type)}: ${args.join(' ')}`);
      } else if (method === 'Runtime.exceptionThrown') {
        const d = p.exceptionDetails as { text: string; exception?: { description?: string } };
        messages.push(`${d.text} ${d.exception?.description?.split('\n')[0] ?? ''}`.trim());
      } else if (method === 'Log.entryAdded') {
        const e = p.entry as { level: string; text: string };
        messages.push(`log.${e.level}: ${e.text}`);
      }
    });
    try {
      await Promise.all([
        this.send('Page.enable', {}, sessionId),
        this.send('Runtime.enable', {}, sessionId),
        this.send('Log.enable', {}, sessionId),
      ]);
      const out: LoadedPage[] = [];
      for (const o of pages) {
        messages = [];
        const load = new Promise<void>((resolve) => {
          loaded = resolve;
        });
        await this.send(
          'Emulation.setDeviceMetricsOverride',
          { width: o.width ?? 1200, height: o.height ?? 900, deviceScaleFactor: 1, mobile: false },
          sessionId,
        );
        await this.send('Page.navigate', { url: o.url }, sessionId);
        await load;
        const { result } = (await this.send(
          'Runtime.evaluate',
          { expression: 'document.documentElement.outerHTML', returnByValue: true },
          sessionId,
        )) as { result: { value: string } };
        let png: Buffer | null = null;
        if (o.screenshot) {
          const shot = (await this.send('Page.captureScreenshot', { format: 'png' }, sessionId)) as { data: string };
          png = Buffer.from(shot.data, 'base64');
        }
        out.push({ dom: result.value, messages, png });
      }
      return out;
    } finally {
      this.listeners.delete(sessionId);
      await this.send('Target.closeTarget', { targetId });
    }
  }

  /** Close the browser and wait for it to exit. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.send('Browser.close').catch(() => {});
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
