// Code blocks in rendered Markdown: syntax colours (highlight.js reads the block's text and
// writes escaped spans, so sanitised content stays safe) and a Copy button with the language.
// The header holds text only (no SVG icon), so a message body never contains an <svg>.
import hljs from '../../vendor/highlight/highlight.min.js';
import { h } from './dom.js';
import { t } from './i18n.js';

const MAX_HIGHLIGHT = 20000;
const GUESS = ['python', 'javascript', 'typescript', 'bash', 'json', 'html', 'xml', 'css', 'sql',
  'java', 'c', 'cpp', 'csharp', 'go', 'rust', 'ruby', 'php', 'yaml', 'markdown', 'kotlin', 'swift'];

hljs.configure({ ignoreUnescapedHTML: true, languages: GUESS });

function languageOf(code) {
  const match = /(?:^|\s)language-([\w+#-]+)/.exec(code.className);
  return match && hljs.getLanguage(match[1]) ? match[1] : null;
}

function highlight(code) {
  const text = code.textContent;
  if (text.length > MAX_HIGHLIGHT) return null;
  const language = languageOf(code);
  const result = language ? hljs.highlight(text, { language, ignoreIllegals: true })
    : hljs.highlightAuto(text);
  if (!result.language || result.relevance < (language ? 0 : 5)) return language;
  code.innerHTML = result.value;
  code.classList.add('hljs');
  return result.language;
}

async function copy(button, text) {
  const label = button.querySelector('span');
  try {
    await navigator.clipboard.writeText(text);
    label.textContent = t('common.code.copied');
  } catch {
    label.textContent = t('common.code.copy_failed');
  }
  setTimeout(() => { label.textContent = t('common.code.copy'); }, 1500);
}

/** Highlights every `pre > code` under `root` and gives it a header with a Copy button. */
export function enhanceCode(root) {
  root.querySelectorAll('pre > code').forEach((code) => {
    const pre = code.parentElement;
    if (pre.parentElement?.classList.contains('code-block')) return;
    const text = code.textContent;
    const language = highlight(code);
    const name = language ? (hljs.getLanguage(language)?.name || language) : t('common.code.language_unknown');
    const button = h('button', { type: 'button', class: 'code-copy', 'aria-label': t('common.code.copy_label', { language: name }) },
      h('span', { text: t('common.code.copy') }));
    button.addEventListener('click', () => copy(button, text));
    const block = h('div', { class: 'code-block' },
      h('div', { class: 'code-head' }, h('span', { class: 'code-lang', text: name }), button));
    pre.replaceWith(block);
    block.append(pre);
  });
}
