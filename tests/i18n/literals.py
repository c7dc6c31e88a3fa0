"""Finds user-visible text written into templates and scripts instead of the catalogue.

Templates: text nodes and the placeholder/title/aria-label/alt attributes (Jinja expressions
removed first; `<code>`, `<script>` and `<style>` contents are not text). Scripts: string literals
that read like prose (two words, a capitalised word, or a sentence ending) in any position but
the ones that never reach a person (class names, imports, console and Error messages, key names
compared with ===, selectors, and `t()`/`tn()` keys).
"""
import re
from html.parser import HTMLParser

LETTER = r"[^\W\d_]"
IGNORE = "i18n-ignore"
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_VISIBLE_ATTRS = ("placeholder", "title", "aria-label", "alt", "aria-description")
_WORD = re.compile(LETTER + "{2,}")
# Text that is the same in every language (formats and product names), exact matches only.
ALLOWED = frozenset({"Persona Cortex", "English", "Deutsch", "Letta .af", "sk-ant-…", "Markdown (.md)", "JSON (.json)"})
_PATH = re.compile(r"^/?[\w.-]+(?:/[\w.{}-]*)*\.\w+$|^/[\w/{}.?=&-]*$")


def _blank(match: re.Match) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


class _TemplateScanner(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("code", "script", "style"):
            self._skip += 1
        for name, value in attrs:
            if name in _VISIBLE_ATTRS and value and _is_text(value):
                self.found.append((self.getpos()[0], f'{name}="{value.strip()}"'))

    def handle_endtag(self, tag):
        if tag in ("code", "script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and _is_text(data):
            self.found.append((self.getpos()[0] + data[:len(data) - len(data.lstrip())].count("\n"),
                               " ".join(data.split())))


def _is_text(value: str) -> bool:
    value = " ".join(value.split())
    return bool(_WORD.search(value)) and value not in ALLOWED and not _PATH.match(value)


def scan_template(source: str) -> list[tuple[int, str]]:
    """(line, text) of every literal text node or visible attribute in a Jinja template."""
    scanner = _TemplateScanner()
    scanner.feed(_JINJA.sub(_blank, source))
    scanner.close()
    return scanner.found


# --- scripts -------------------------------------------------------------------------------

_PROSE = re.compile(rf"{LETTER}[\s\u00a0]+\W{{0,3}}{LETTER}|^[A-ZÄÖÜ][a-zäöüß]+[.!?…:]?$")
# Positions whose strings never reach a person, whatever they look like.
_QUIET_CONTEXT = re.compile(
    r"(?:\bimport|\bfrom|console\.\w+|new (?:Type|Range)?Error|querySelector(?:All)?|closest|"
    r"matches|classList\.\w+|\bt|\btn|\bhas|===|!==|\bcase|addEventListener|\brel|"
    r"removeEventListener|dataset\.\w+|\bsetProperty)\s*[(:=,]?\s*\(?\s*$"
    r"|\b(?:class|className)\s*[:=][^,;]*$"
    r"|setAttribute\(\s*['\"](?:rel|class|type|role|id|name|href|target|data-[\w-]+)['\"]\s*,\s*$")
# Positions that take identifiers: quiet only for strings without spaces.
_IDENTIFIER_CONTEXT = re.compile(r"\b(?:type|name|id|role|kind|method|key)\s*[:=]\s*$")
_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^")


def _literals(source: str):
    """Yields (line, text, code before it on that line) for each string literal in JS source."""
    i, line, n = 0, 1, len(source)
    code_line = []  # code (not strings/comments) seen on the current line
    last_sig = ""
    while i < n:
        ch = source[i]
        if ch == "\n":
            line, code_line = line + 1, []
            i += 1
        elif source.startswith("//", i):
            i = source.find("\n", i) if "\n" in source[i:] else n
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
            line += source.count("\n", i, end)
            i = end
        elif ch in "'\"`":
            start_line, j, text, nested = line, i + 1, [], []
            while j < n and source[j] != ch:
                if source[j] == "\\":
                    text.append(source[j:j + 2])
                    j += 2
                    continue
                if ch == "`" and source.startswith("${", j):
                    depth, j, start = 1, j + 2, j + 2
                    while j < n and depth:
                        depth += {"{": 1, "}": -1}.get(source[j], 0)
                        j += 1
                    nested.extend((line + number - 1, inner, before)
                                  for number, inner, before in _literals(source[start:j - 1]))
                    line += source.count("\n", start, j)
                    text.append("{x}")
                    continue
                if source[j] == "\n":
                    line += 1
                text.append(source[j])
                j += 1
            yield start_line, "".join(text), "".join(code_line)
            yield from nested
            literal = "".join(text)
            code_line.append(ch + (literal if re.fullmatch(r"[\w-]{1,40}", literal) else "") + ch)
            last_sig, i = ch, j + 1
        elif ch == "/" and (last_sig in _REGEX_BEFORE or last_sig == "" or
                            "".join(code_line).rstrip().endswith("return")):
            j, in_class = i + 1, False
            while j < n and source[j] != "\n":
                if source[j] == "\\":
                    j += 2
                    continue
                if source[j] == "[":
                    in_class = True
                elif source[j] == "]":
                    in_class = False
                elif source[j] == "/" and not in_class:
                    break
                j += 1
            code_line.append(source[i:j + 1])
            last_sig, i = "/", j + 1
        else:
            code_line.append(ch)
            if not ch.isspace():
                last_sig = ch if not (ch.isalnum() or ch in "_$") else "a"
            i += 1


def scan_script(source: str) -> list[tuple[int, str]]:
    """(line, text) of every prose-like string literal in a JS module outside quiet positions
    (a line that says `i18n-ignore` in a comment is skipped: say why next to it)."""
    found, lines = [], source.splitlines()
    for line, text, before in _literals(source):
        if IGNORE in lines[line - 1]:
            continue
        visible = text.replace("{x}", "x").strip()
        words = text.replace("{x}", " ")
        if not _WORD.search(words) or not _PROSE.search(visible) or visible in ALLOWED:
            continue
        if _QUIET_CONTEXT.search(before.rstrip()):
            continue
        if _IDENTIFIER_CONTEXT.search(before.rstrip()) and not re.search(r"\s", visible):
            continue
        found.append((line, text))
    return found
