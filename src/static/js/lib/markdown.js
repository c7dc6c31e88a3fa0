// Model output and cortex files are untrusted: Markdown is parsed by marked, then everything goes
// through DOMPurify into a DOM fragment. Raw HTML in the text is shown as typed, never parsed as
// markup, so no attribute the model wrote (an event handler, say) reaches any HTML parser; see
// docs/security.md for why that matters even for inert documents. Links keep only http(s) and
// mailto targets and open in a new tab without an opener; images only load from this origin or
// data: URLs.
import { Marked } from '../../vendor/marked/marked.esm.js';
import DOMPurify from '../../vendor/dompurify/purify.es.js';
import { enhanceCode } from './code_blocks.js';

const HTML_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const LINK_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);
const FORBID_TAGS = ['style', 'form', 'input', 'button', 'textarea', 'select', 'option',
  'iframe', 'object', 'embed', 'svg', 'math', 'video', 'audio', 'source', 'picture'];

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]);
}

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: { html: ({ text }) => escapeHtml(text) },
});

function safeLink(href) {
  try {
    return LINK_PROTOCOLS.has(new URL(href, window.location.href).protocol);
  } catch {
    return false;
  }
}

function safeImage(src) {
  try {
    const url = new URL(src, window.location.href);
    return url.origin === window.location.origin
      || (url.protocol === 'data:' && /^data:image\/(png|gif|jpeg|webp);/i.test(src));
  } catch {
    return false;
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    const href = node.getAttribute('href');
    if (href !== null && !safeLink(href)) node.removeAttribute('href');
    if (node.hasAttribute('href')) {
      node.setAttribute('target', '_blank');
      node.setAttribute('rel', 'noopener noreferrer nofollow');
    }
  } else if (node.tagName === 'IMG') {
    const src = node.getAttribute('src');
    if (src !== null && !safeImage(src)) node.removeAttribute('src');
    node.setAttribute('loading', 'lazy');
  }
});

const PURIFY_OPTIONS = {
  RETURN_DOM_FRAGMENT: true,
  FORBID_TAGS,
  FORBID_ATTR: ['style', 'srcset', 'action', 'formaction'],
  ALLOW_DATA_ATTR: false,
};

/** Sanitised DOM for `text` rendered as GitHub-flavoured Markdown. */
export function markdownFragment(text) {
  const html = marked.parse(String(text ?? ''));
  return DOMPurify.sanitize(html, PURIFY_OPTIONS);
}

/** Replaces `target`'s content with `text` rendered as sanitised Markdown. */
export function renderMarkdown(target, text) {
  target.replaceChildren(markdownFragment(text));
  enhanceCode(target);
}
