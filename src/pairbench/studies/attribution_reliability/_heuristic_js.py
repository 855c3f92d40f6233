"""The page-side scripts of the heuristic engine (run with Playwright's ``evaluate``).

They mark elements with ``data-pb`` refs (in DOM order) so the engine clicks exactly what
it enumerated, and watch mutations between an action and its outcome. Mutations of the
engine's own ``data-pb*`` attributes are ignored, so marking never counts as an effect.
"""

from __future__ import annotations

ENUMERATE = r"""
() => {
  document.querySelectorAll('[data-pb],[data-pb-h]').forEach(e => {
    e.removeAttribute('data-pb'); e.removeAttribute('data-pb-h'); });
  const SEL = 'a[href], button, input:not([type=hidden]), select, textarea, [role=button],'
    + '[role=tab], [role=link], [role=menuitem], summary, [aria-expanded], [onclick]';
  const clean = t => (t || '').replace(/\s+/g, ' ').trim().slice(0, 120);
  const shown = el => {
    const r = el.getBoundingClientRect(), s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'
      && parseFloat(s.opacity || '1') > 0.05;
  };
  const labelOf = el => {
    const aria = el.getAttribute('aria-label');
    if (aria) return clean(aria);
    const by = el.getAttribute('aria-labelledby');
    if (by) return clean(by.split(/\s+/).map(
      i => (document.getElementById(i) || {}).innerText || '').join(' '));
    if (el.labels && el.labels.length) return clean(el.labels[0].innerText);
    if (el.tagName === 'INPUT' && ['submit', 'button', 'reset'].includes(el.type))
      return clean(el.value);
    if (!['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName)) {
      const t = clean(el.innerText || el.textContent);
      if (t) return t;
      const img = el.querySelector('img[alt]');
      if (img) return clean(img.alt);
    }
    const prev = el.previousElementSibling;
    const near = prev && !prev.matches(SEL) ? clean(prev.innerText) : '';
    return clean(el.getAttribute('title') || el.getAttribute('placeholder') || near
      || el.getAttribute('name') || el.id || '');
  };
  const all = Array.from(document.querySelectorAll(SEL));
  for (const el of document.querySelectorAll('div, span, li, h2, h3, h4, p')) {
    // Clickable-looking text without a role (div accordions): a pointer cursor that its
    // parent does not share, short text, and no control inside.
    if (all.includes(el) || el.querySelector(SEL)) continue;
    const s = getComputedStyle(el);
    if (s.cursor !== 'pointer' || getComputedStyle(el.parentElement).cursor === 'pointer')
      continue;
    const t = clean(el.innerText);
    if (t && t.length < 80) all.push(el);
  }
  all.sort((a, b) => a === b ? 0 :
    (a.compareDocumentPosition(b) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
  let h = 0;
  return all.map((el, i) => {
    el.setAttribute('data-pb', String(i));
    const visible = shown(el);
    let reveal = null;
    if (!visible) {
      const det = el.closest('details:not([open])');
      // One mark per ancestor: several hidden links may share the menu that shows them.
      const mark = node => {
        if (!node.hasAttribute('data-pb-h')) node.setAttribute('data-pb-h', String(h++));
        return Number(node.getAttribute('data-pb-h'));
      };
      if (det && det.querySelector('summary') && shown(det.querySelector('summary'))) {
        reveal = {how: 'open', ref: mark(det.querySelector('summary'))};
      } else {
        let up = el.parentElement;
        while (up && up !== document.body && !shown(up)) up = up.parentElement;
        if (up && up !== document.body) reveal = {how: 'hover', ref: mark(up)};
      }
    }
    const form = el.form || el.closest('form');
    const href = el.tagName === 'A' ? el.href : '';
    return {
      ref: i, tag: el.tagName.toLowerCase(), type: (el.type || '').toLowerCase(),
      role: el.getAttribute('role') || '', name: labelOf(el), href,
      visible, reveal, disabled: !!el.disabled,
      form: form ? Array.from(document.forms).indexOf(form) : -1,
      autocomplete: (el.getAttribute('autocomplete') || '').toLowerCase(),
      value: el.value === undefined ? '' : String(el.value),
      required: !!el.required,
      options: el.tagName === 'SELECT' ? el.options.length : 0,
      chrome: !!el.closest('header, nav, footer'),
    };
  });
}
"""
"""Every control (and pointer-cursor text) in DOM order with its accessible name."""

WATCH = r"""
() => {
  const state = {n: 0, added: []};
  const obs = new MutationObserver(list => {
    for (const m of list) {
      if (m.type === 'attributes' && (m.attributeName || '').startsWith('data-pb')) continue;
      state.n += 1;
      const nodes = m.type === 'childList' ? Array.from(m.addedNodes)
        : m.type === 'characterData' ? [m.target] : [m.target];
      for (const nd of nodes) {
        const t = (nd.innerText !== undefined ? nd.innerText : nd.textContent) || '';
        if (t.trim()) state.added.push(t.replace(/\s+/g, ' ').trim().slice(0, 300));
      }
    }
  });
  obs.observe(document, {subtree: true, childList: true, attributes: true,
    characterData: true});
  window.__pbWatch = state;
}
"""
"""Starts counting DOM mutations (and the text they add) before an action."""

READ_WATCH = "() => window.__pbWatch ? window.__pbWatch : null"

PAGE_TEXT = "() => (document.body ? document.body.innerText : '').replace(/\\s+/g, ' ').trim()"

BLOCKS = r"""
() => Array.from(document.querySelectorAll('p, li, dd, dt, td, th, span, h1, h2, h3, h4, div'))
  .filter(el => !el.querySelector('p, li, dd, td, div, h1, h2, h3, h4'))
  .filter(el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0
    && getComputedStyle(el).visibility !== 'hidden'; })
  .filter(el => !el.closest('nav, a, button, header, footer'))
  .map(el => (el.innerText || '').replace(/\s+/g, ' ').trim()).filter(t => t)
"""
"""Visible leaf text blocks outside navigation and controls (where an answer would be)."""

EXPAND = r"""
() => {
  let n = 0;
  document.querySelectorAll('details:not([open])').forEach(d => { d.open = true; n++; });
  return n;
}
"""
"""Opens every closed ``details`` (what a reader clicking each summary would see)."""

COLLAPSED = r"""
() => Array.from(document.querySelectorAll('[data-pb]')).filter(el => {
  if (el.getAttribute('aria-expanded') === 'false') return true;
  if (el.tagName === 'SUMMARY') return !el.parentElement.open;
  const next = el.nextElementSibling;
  return getComputedStyle(el).cursor === 'pointer' && !['A', 'BUTTON', 'INPUT'].includes(
    el.tagName) && next && getComputedStyle(next).display === 'none';
}).map(el => Number(el.getAttribute('data-pb')))
"""
"""Refs of collapsed section headers (ARIA, ``summary`` or a pointer header over a hidden
sibling)."""

INVALID_FIELDS = r"""
() => Array.from(document.querySelectorAll('input, select, textarea'))
  .filter(el => el.willValidate && !el.checkValidity())
  .map(el => ({ref: Number(el.getAttribute('data-pb') || '-1'),
    name: ((el.labels && el.labels[0] && el.labels[0].innerText) || el.getAttribute('aria-label')
      || el.placeholder || el.name || el.id || el.type || '').replace(/\s+/g, ' ').trim()}))
"""
"""Fields the browser's own validation refuses (ref and a readable name)."""

SCROLL = "() => { window.scrollTo(0, document.body.scrollHeight); }"

ALERTS = r"""
() => Array.from(document.querySelectorAll(
    '[role=alert], [aria-live=assertive], [aria-live=polite], h1, h2'))
  .filter(el => { const r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0; })
  .map(el => (el.innerText || '').replace(/\s+/g, ' ').trim()).concat([document.title])
  .filter(t => t).join(' | ')
"""
"""Where a page announces its state: alerts, live regions, top headings and the title."""
