// One WebSocket to /ws/chat for the page. Frames out: {type: chat|stop|regenerate|subscribe};
// frames in: {type: start|chunk|done|error|cortex|title, ...}. Reconnects with backoff.
// Browsers do not tell why an upgrade was refused, so a refused socket asks a cheap endpoint:
// a 401 there means the sign-in was lost, and the API client takes the person to sign in.
// A socket closed because the page is being left is no lost connection: nothing is reported.
import { request } from '../lib/api.js';
import { unlessLeaving } from '../lib/leaving.js';

const MAX_BACKOFF_MS = 8000;
const SIGN_IN_PROBE = '/api/settings';

/** The page's chat socket; emits `frame`, `open` and `close` events. */
export class ChatSocket extends EventTarget {
  constructor(path = '/ws/chat') {
    super();
    const scheme = window.location.protocol === 'https:' ? 'wss:' : 'ws:';
    this.url = `${scheme}//${window.location.host}${path}`;
    this.ws = null;
    this.backoff = 500;
    this.opened = null;
  }

  /** Opens the socket (once); resolves when it is ready to send. */
  connect() {
    if (this.ws && this.ws.readyState <= WebSocket.OPEN) return this.opened;
    const ws = new WebSocket(this.url);
    let wasOpen = false;
    this.ws = ws;
    this.opened = new Promise((resolve, reject) => {
      ws.addEventListener('open', () => {
        wasOpen = true;
        this.backoff = 500;
        resolve();
        this.dispatchEvent(new Event('open'));
      }, { once: true });
      ws.addEventListener('close', () => reject(new Error('closed')), { once: true });
    });
    this.opened.catch(() => {});
    ws.addEventListener('message', (event) => this.receive(event.data));
    ws.addEventListener('close', async () => {
      if (this.ws !== ws) return;
      this.ws = null;
      await unlessLeaving();
      this.dispatchEvent(new Event('close'));
      if (!wasOpen) request('GET', SIGN_IN_PROBE).catch(() => {});
      setTimeout(() => this.connect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
    });
    return this.opened;
  }

  /** Sends a frame, connecting first if needed; rejects when the server cannot be reached. */
  async send(frame) {
    await this.connect();
    this.ws.send(JSON.stringify(frame));
  }

  receive(raw) {
    let frame;
    try {
      frame = JSON.parse(raw);
    } catch {
      return;
    }
    if (frame && typeof frame.type === 'string') {
      this.dispatchEvent(new CustomEvent('frame', { detail: frame }));
    }
  }
}
