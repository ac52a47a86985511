// The in-page JavaScript of web_execute_js, loaded once by tools/web_execute_js.py at import.
// Each section, from a `// == NAME ==` line to the next, is the source of one function passed to page.evaluate.

// == SHORT_HTML_JS ==
() => { window.__gaShort = (node, limit) => {
  const G = window.__ga || (window.__ga = { next: 1, refs: new Map() });
  const keepAttr = new RegExp('^(id|class|name|type|href|src|value|placeholder|role|aria-label|title|alt|for|'
    + 'action|method|checked|selected|disabled|data-ga)$');
  const url = (u) => u.startsWith('data:') ? 'data:…' : (u.length > 60 ? u.slice(0, 59) + '…' : u);
  const ref = (el) => {
    let n = +el.getAttribute('data-ga');
    if (!n || (G.refs.get(n) && G.refs.get(n) !== el)) { n = G.next++; el.setAttribute('data-ga', n); }
    G.refs.set(n, el);
  };
  let budget = limit;
  const walk = (n, depth) => {
    if (budget <= 0) return '';
    if (n.nodeType === 3) {
      const t = n.data.replace(/\s+/g, ' ');
      budget -= t.length;
      return t.length > 80 ? t.slice(0, 79) + '…' : t;
    }
    if (n.nodeType !== 1) return '';
    if (/^(SCRIPT|STYLE|svg|NOSCRIPT)$/.test(n.tagName)) return '';
    if (/^(A|BUTTON|INPUT|SELECT|TEXTAREA|FORM|DIALOG)$/.test(n.tagName) || depth === 0) ref(n);
    const tag = n.tagName.toLowerCase();
    const attrs = [...n.attributes].filter((a) => keepAttr.test(a.name)).map((a) =>
      ` ${a.name}="${a.name === 'class' ? a.value.split(/\s+/).slice(0, 2).join(' ') : url(a.value)}"`).join('');
    budget -= tag.length + attrs.length;
    if (/^(input|img|br|hr)$/.test(tag)) return `<${tag}${attrs}>`;
    const inner = depth >= 4 ? (n.childNodes.length ? '…' : '')
      : [...n.childNodes].map((c) => walk(c, depth + 1)).join('');
    return `<${tag}${attrs}>${inner.trim()}</${tag}>`;
  };
  const out = walk(node, 0);
  return budget < 0 ? out.slice(0, limit) + '…' : out;
}; }

// == SERIALIZE_JS ==
() => { window.__gaSerialize = function (value) {
  const G = window.__ga || (window.__ga = { next: 1, refs: new Map() });
  window.$ga = window.$ga || ((n) => G.refs.get(+n) || document.querySelector(`[data-ga="${n}"]`));
  const ser = (v, depth) => {
    if (v === undefined) return 'undefined';
    if (typeof v === 'function') return `function ${v.name || ''}`;
    if (v instanceof Node) return { __html: window.__gaShort(v, 400) };
    if (v instanceof Error) return `${v.name}: ${v.message}`;
    if (typeof v === 'bigint') return `${v}n`;
    if (typeof v === 'symbol' || v instanceof RegExp) return String(v);
    if (v instanceof Date) return isNaN(v) ? 'Invalid Date' : v.toISOString();
    if (depth > 3) return '…';
    if (v instanceof Map) {
      return { [`Map(${v.size})`]: [...v].slice(0, 50).map(([k, x]) => [ser(k, depth + 1), ser(x, depth + 1)]) };
    }
    if (v instanceof Set) return { [`Set(${v.size})`]: [...v].slice(0, 50).map((x) => ser(x, depth + 1)) };
    if (Array.isArray(v) || v instanceof NodeList || v instanceof HTMLCollection) {
      const items = [...v].slice(0, 50).map((x) => ser(x, depth + 1));
      if (v.length > 50) items.push(`… ${v.length - 50} more`);
      return items;
    }
    if (v && typeof v === 'object') {
      const out = {}; let n = 0;
      for (const k in v) {
        if (n++ >= 50) { out['…'] = 'more keys'; break; }
        try { out[k] = ser(v[k], depth + 1); } catch (e) { out[k] = '(unreadable)'; }
      }
      return out;
    }
    return v;
  };
  try {
    const out = ser(value, 0);
    return out === 'undefined' ? 'undefined' : JSON.stringify(out);
  } catch (e) { try { return JSON.stringify(String(value)); } catch (e2) { return '"(unserialisable value)"'; } }
}; }

// == WATCH_JS ==
() => {
  const old = window.__gaWatch; if (old) old.obs.disconnect();
  const w = window.__gaWatch = { toasts: [], added: [], changed: [], last: performance.now(), texts: new Map() };
  // The texts of the elements of the main region (and a dialog) that hold text themselves: headings, labels,
  // buttons, lines. Compared after the script, they show what changed in place ('Sign in' -> 'Dashboard').
  const G = window.__ga || {};
  const roots = [G.main, G.modal].filter((el) => el && el.isConnected);
  if (!roots.length) roots.push(document.querySelector('main, [role=main]') || document.body);
  let walked = 0;
  for (const root of roots) {
    const it = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT);
    for (let el = root; el && walked < 20000 && w.texts.size < 3000; el = it.nextNode(), walked++) {
      if (/^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE|svg)$/.test(el.tagName) || w.texts.has(el)) continue;
      let own = false;
      for (const c of el.childNodes) if (c.nodeType === 3 && c.data.trim()) { own = true; break; }
      const text = own ? el.textContent : '';
      if (own && text.length <= 600) w.texts.set(el, text.replace(/\s+/g, ' ').trim());
    }
  }
  const TOASTY = /toast|snackbar|notif|flash|alert|growl|message/i;
  const toasty = (el) => {
    for (let i = 0; el && el.nodeType === 1 && i < 6; i++, el = el.parentElement) {
      const live = el.getAttribute('aria-live');
      if ((live && live !== 'off') || /^(alert|status|log)$/.test(el.getAttribute('role') || '')) return true;
      if (TOASTY.test(`${typeof el.className === 'string' ? el.className : ''} ${el.id}`)) return true;
    }
    return false;
  };
  const note = (el) => { const t = (el && el.textContent || '').replace(/\s+/g, ' ').trim();
    if (t && toasty(el) && !w.toasts.includes(t.slice(0, 200))) w.toasts.push(t.slice(0, 200)); };
  w.obs = new MutationObserver((records) => {
    w.last = performance.now();
    for (const m of records) {
      if (m.type === 'childList') for (const n of m.addedNodes) {
        const el = n.nodeType === 1 ? n : n.parentElement;
        note(el); if (n.nodeType === 1) w.added.push(n); else if (el) w.changed.push(el);
      } else if (m.type === 'characterData') { note(m.target.parentElement); w.changed.push(m.target.parentElement); }
      else if (m.attributeName !== 'data-ga') { note(m.target); w.changed.push(m.target); }
    }
  });
  w.obs.observe(document, { subtree: true, childList: true, characterData: true, attributes: true,
    attributeFilter: ['class', 'style', 'hidden', 'open', 'aria-hidden', 'aria-expanded', 'disabled', 'value'] });
}

// == RUN_JS ==
(source) => {
  const AsyncFunction = (async () => {}).constructor;
  const compiles = (body) => { try { new AsyncFunction(body); return true; } catch (e) { return false; } };
  // One expression, or statements whose last one is an expression: try split points from the end.
  let body = `return (\n${source}\n);`;
  if (!compiles(body)) {
    body = source;
    for (let i = source.length - 1, tries = 0; i > 0 && tries < 300; i--) {
      if (!/[;\n}]/.test(source[i])) continue;
      tries++;
      const tail = source.slice(i + 1).trim().replace(/;+$/, '');
      const candidate = `${source.slice(0, i + 1)}\nreturn (\n${tail}\n);`;
      if (tail && compiles(candidate)) { body = candidate; break; }
    }
  }
  const state = window.__gaRun = { done: false };
  let fn;
  try { fn = new AsyncFunction(body); } catch (e) { state.error = String(e); state.done = true; return; }
  // started from a timer so that evaluate returns at once and a synchronous endless loop meets the timeout
  setTimeout(() => fn().then((v) => { state.value = window.__gaSerialize(v); },
    (e) => { state.error = e instanceof Error ? `${e.name}: ${e.message}` : `thrown: ${String(e)}`; })
    .finally(() => { state.done = true; }), 0);
}

// == QUIET_JS ==
(quiet) => { const w = window.__gaWatch; return !w || performance.now() - w.last >= quiet; }

// == COLLECT_JS ==
() => {
  const w = window.__gaWatch; if (!w) return null;
  w.obs.disconnect(); delete window.__gaWatch;
  const seen = new Set(), picks = [];
  for (const el of [...w.added, ...w.changed]) {
    if (!el || seen.has(el) || !el.isConnected) continue;
    if (el.checkVisibility && !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
    seen.add(el); picks.push(el);
  }
  const top = picks.filter((el) => !picks.some((o) => o !== el && o.contains(el)));
  // an inserted node first (a changed element's text shows in the text changes), the largest one
  const size = (el) => (el.innerText || '').length + (w.added.includes(el) ? 1e7 : 0);
  top.sort((a, b) => size(b) - size(a));
  const best = top[0], bestAdded = !!best && w.added.includes(best);
  return { toasts: w.toasts, added: w.added.length, changed: w.changed.length,
    change: best ? { added: bestAdded, html: window.__gaShort(best, 700) } : null,
    texts: textChanges(w, best, bestAdded) };

  // Existing elements whose text changed, outermost first, largest change first; each as the changed part with
  // a little context. The largest change's own new text is already shown in full.
  function textChanges(w, best, bestAdded) {
    const found = [];
    for (const [el, before] of w.texts) {
      if (!el.isConnected || (bestAdded && best.contains(el))) continue;
      const after = el.textContent.replace(/\s+/g, ' ').trim();
      if (after === before || (el === best && !before)) continue;
      if (after && el.checkVisibility && !el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
      found.push({ el, before, after });
    }
    const outer = found.filter((c) => !found.some((o) => o !== c && o.el.contains(c.el)));
    const parts = outer.map((c) => ({ ...c, ...excerpt(c.before, c.after) }));
    parts.sort((a, b) => b.size - a.size);
    return { shown: parts.slice(0, 5).map((p) => ({ what: name(p.el), before: p.from, after: p.to })),
      more: Math.max(0, parts.length - 5) };
  }
  function excerpt(a, b) {
    let i = 0, j = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i++;
    while (j < a.length - i && j < b.length - i && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
    const s = Math.max(0, i - 25), ea = a.length - Math.max(0, j - 25), eb = b.length - Math.max(0, j - 25);
    const clip = (t, from, to) => {
      let out = t.slice(from, to);
      if (out.length > 90) out = out.slice(0, 89) + '…'; else if (to < t.length) out += '…';
      return (from ? '…' : '') + out;
    };
    return { from: clip(a, s, ea), to: clip(b, s, eb), size: Math.max(a.length, b.length) - i - j };
  }
  function name(el) {  // a text inside a button or link is named by it, with its ref when web_scan gave one
    const host = el.closest('a, button, label, summary, legend, [role=button], [role=tab], [role=link], h1, h2, h3, '
      + 'h4, h5, h6');
    const use = host && host.textContent.length <= 300 ? host : el;
    const tag = use.tagName.toLowerCase(), ref = use.getAttribute('data-ga');
    return ref ? `[${tag}]#${ref}` : tag;
  }
}
