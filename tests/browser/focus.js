// Measures the focus indicator of the focused element (run in the page by tests/browser/test_keyboard.py).
// The indicator is an outline (box-shadows disappear in forced-colors mode), on the element or,
// for a field drawn inside a box (the composer), on the nearest ancestor that draws one; a
// visually hidden control (the card file input) shows it on its label instead. Its
// pixels are compared with what they cover when nothing is focused: the background behind the
// outline, composited from the ancestors' background colours.
() => {
  const el = document.activeElement;
  const parse = (text) => {
    const m = text.match(/rgba?\(([\d.]+),? ([\d.]+),? ([\d.]+)(?:,? \/? ?([\d.]+))?\)/);
    return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null;
  };
  const over = (top, below) => top.slice(0, 3).map((c, i) => c * top[3] + below[i] * (1 - top[3]));
  const backgroundAt = (node) => {
    const layers = [];
    for (let n = node; n; n = n.parentElement) {
      const colour = parse(getComputedStyle(n).backgroundColor);
      if (colour && colour[3] > 0) layers.push(colour);
      if (colour && colour[3] === 1) break;
    }
    return layers.reduceRight((below, top) => over(top, below), [255, 255, 255]);
  };
  const luminance = (rgb) => {
    const [r, g, b] = rgb.map((c) => {
      const s = c / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const contrast = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const describe = (node) => node.id ? `#${node.id}` : `${node.tagName.toLowerCase()}.${[...node.classList].join('.')}` +
    ` "${(node.getAttribute('aria-label') || node.textContent || '').trim().slice(0, 30)}"`;
  if (!el || el === document.body) return null;
  const drawn = (n) => getComputedStyle(n).outlineStyle !== 'none' && parseFloat(getComputedStyle(n).outlineWidth) > 0;
  let holder = null;
  if (el.getBoundingClientRect().width <= 1) {
    holder = [...(el.labels || [])].find(drawn) || null;
  } else {
    for (let n = el; n && n !== document.body && !holder; n = n.parentElement) if (drawn(n)) holder = n;
  }
  const result = { element: describe(el), holder: holder && describe(holder), width: 0, ratio: 0 };
  if (!holder) return result;
  const style = getComputedStyle(holder);
  const width = parseFloat(style.outlineWidth);
  const outside = parseFloat(style.outlineOffset) + width > 0;
  const behind = backgroundAt(outside ? holder.parentElement : holder);
  const ring = parse(style.outlineColor);
  result.width = width;
  result.style = style.outlineStyle;
  result.ratio = ring ? contrast(over(ring, behind), behind) : 0;
  return result;
}
