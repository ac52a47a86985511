// Layout analysis inside the page, for web_scan. Evaluated as a function: (opts) => scan.
// Pass 1 measures what is visible and scores text blocks (Readability-like: long, link-poor text).
// Main content = the smallest element holding most of that score; a centred modal dialog wins.
// Pass 2 serialises each region compactly: text, headings, tables, interactive elements with refs ($ga(N)),
// long repeated lists folded (always outside main, into the region's closing count; inside main only if web_scan
// needs the room). In boilerplate a link is said once a page, one that only scrolls or shares the page is left out
// (shares counted), a footer is cut at its link cap; in main a link that only scrolls or cites a source reads as text.
// `math` holds the formula helpers of page_math.js.
(opts, math) => {
  const textOnly = !!opts.textOnly, started = performance.now();
  const G = window.__ga || (window.__ga = { next: 1, refs: new Map() });
  window.$ga = (n) => G.refs.get(+n) || document.querySelector(`[data-ga="${n}"]`);
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'HEAD', 'META', 'LINK', 'svg', 'SVG', 'CANVAS',
    'OBJECT', 'EMBED', 'PARAM', 'SOURCE', 'TRACK', 'MAP', 'IMG', 'PICTURE', 'VIDEO', 'AUDIO', 'HR', 'WBR']);
  const NEG = /(^|[-_\s])(nav|navbar|navigation|menu|menus|sidebar|side-bar|footer|foot|masthead|header|breadcrumbs?|comments?|disqus|share|sharing|social|related|recommended|recirc|promo|sponsor(ed)?|banner|cookies?|consent|gdpr|newsletter|subscribe|signup|popup|modal|outbrain|taboola|widget|skip|pagination|pager|toolbar|tags|byline-share)([-_\s]|$)/i;
  const POS = /(^|[-_\s])(article|body|content|entry|hentry|main|post|text|story|blog)([-_\s]|$)/i;
  const AD = /(^|[-_\s])(ad|ads|adv|advert|advertisement|adsense|adslot|ad-slot|dfp|gpt-ad|sponsored-links)([-_\s0-9]|$)/i;
  const LANDMARK = { NAV: 'nav', ASIDE: 'aside', FOOTER: 'footer', HEADER: 'header' };
  const ROLES = { navigation: 'nav', complementary: 'aside', contentinfo: 'footer', banner: 'header', search: 'search' };
  const CLICK_ROLES = /^(button|link|tab|menuitem|menuitemcheckbox|menuitemradio|option|switch|checkbox|radio|treeitem)$/;
  const info = new Map(), fixed = [];
  const sx = scrollX, sy = scrollY;
  const docW = Math.max(document.documentElement.scrollWidth, innerWidth);

  const kids = (n) => {
    if (n.shadowRoot) return n.shadowRoot.childNodes;
    if (n.tagName === 'SLOT') { const a = n.assignedNodes({ flatten: true }); return a.length ? a : n.childNodes; }
    if (n.tagName === 'IFRAME') { try { const b = n.contentDocument && n.contentDocument.body; return b ? [b] : []; } catch (e) { return []; } }
    return n.childNodes;
  };
  const sig = (el) => `${typeof el.className === 'string' ? el.className : ''} ${el.id || ''}`;
  // icon-font glyphs (Unicode's private use area) read as nothing
  const clean = (s) => s.replace(/\s+/g, ' ').replace(/[\ue000-\uf8ff]/g, '');
  const cut = (s, n) => (s.length > n ? s.slice(0, n - 1) + '…' : s);

  function hidden(el, st, r, clip) {
    if (st.display === 'none' || st.visibility === 'hidden' || st.visibility === 'collapse') return true;
    if (st.display === 'contents') return false;
    if (+st.opacity === 0 || el.getAttribute('aria-hidden') === 'true' || el.inert) return true;
    const flat = r.width < 2 || r.height < 2;
    if (flat && (st.overflow !== 'visible' || (r.width === 0 && r.height === 0 && !el.firstElementChild))) return true;
    if (r.right + sx <= 0 || r.bottom + sy <= 0 || r.left + sx >= docW) return true;  // parked off-screen
    // parked to the right (an off-canvas menu, text moved out of sight): the page grows to hold it, unseen
    if ((st.position === 'absolute' || st.position === 'fixed') && r.left >= innerWidth) return true;
    if (clip && st.position !== 'fixed' && (r.right <= clip.left || r.left >= clip.right)) return true;  // carousels
    return unseenText(el, st);
  }

  // Text in a box that is there but cannot be read: pushed out of its box (text-indent), clipped away, 0 px,
  // transparent or the colour of what is behind it. Controls keep their names (an image-replaced link is clicked
  // by its text); a gradient heading (background-clip: text) is seen.
  const CONTROL = /^(A|BUTTON|INPUT|SELECT|TEXTAREA|LABEL|SUMMARY)$/;
  const SEEN = /^(A|BUTTON|INPUT|SELECT|TEXTAREA|LABEL|SUMMARY|IMG|svg|SVG|VIDEO|CANVAS|IFRAME|PICTURE)$/;
  const backs = new Map();
  function unseenText(el, st) {
    if (CONTROL.test(el.tagName) || CLICK_ROLES.test(el.getAttribute('role') || '')) return false;
    if (parseFloat(st.textIndent) <= -999) return true;
    if (/^inset\(\s*(?:[5-9]\d|\d{3,})(?:\.\d+)?%/.test(st.clipPath) || /^(circle|ellipse)\(0(px)?[ )]/.test(st.clipPath)) return true;
    if (/absolute|fixed/.test(st.position) && /^rect\(0px,? 0px,? 0px,? 0px\)$/.test(st.clip)) return true;
    if (!ownText(el) || !unread(el, st)) return false;  // a box without text of its own: its parts are judged
    for (const d of el.querySelectorAll('*')) if (SEEN.test(d.tagName) || !unread(d, getComputedStyle(d))) return false;
    return true;  // every part of it is unreadable, not only the part whose style said so
  }
  const ownText = (el) => Array.prototype.some.call(el.childNodes, (k) => k.nodeType === 3 && k.data.trim());
  function unread(el, st) {
    if (parseFloat(st.fontSize) < 1) return true;
    if (st.backgroundClip === 'text' || st.webkitBackgroundClip === 'text') return false;
    const c = rgba(st.color);
    if (!c || c[3] === 0) return !!c;
    const b = behind(el);
    return !!b && c[3] === 1 && Math.abs(c[0] - b[0]) + Math.abs(c[1] - b[1]) + Math.abs(c[2] - b[2]) < 12;
  }
  // The colour painted behind an element: its own or its nearest ancestor's; null under an image (not judged).
  function behind(el) {
    if (!el || el.nodeType !== 1) return [255, 255, 255, 1];
    if (backs.has(el)) return backs.get(el);
    const st = getComputedStyle(el), c = rgba(st.backgroundColor);
    const b = st.backgroundImage !== 'none' ? null : c && c[3] === 1 ? c : behind(el.parentElement);
    backs.set(el, b);
    return b;
  }
  function rgba(s) {
    const m = /^rgba?\((\d+(?:\.\d+)?),\s*(\d+(?:\.\d+)?),\s*(\d+(?:\.\d+)?)(?:,\s*([\d.]+))?\)$/.exec(s || '');
    return m ? [+m[1], +m[2], +m[3], m[4] === undefined ? 1 : +m[4]] : null;
  }

  function boiler(el, st) {
    const role = el.getAttribute('role');
    if (ROLES[role]) return ROLES[role];
    if (LANDMARK[el.tagName] && !(el.tagName === 'HEADER' && el.closest('article, main'))) return LANDMARK[el.tagName];
    const s = sig(el);
    if (AD.test(s) && !POS.test(s)) return 'ad';
    const m = NEG.exec(s);
    if (m && !POS.test(s) && !/^(BODY|MAIN|ARTICLE|A|BUTTON|LI|LABEL|INPUT|SELECT|TEXTAREA)$/.test(el.tagName)
        && !st.display.startsWith('inline')) return m[2].toLowerCase().replace(/s$/, '');
    return null;
  }

  // Pass 1: visibility and text scores. `inl` counts inline text up to the nearest block boundary.
  function measure(el, inLink, inBoiler, clip, view) {
    const st = view.getComputedStyle(el), r = el.getBoundingClientRect();
    if (hidden(el, st, r, clip)) { info.set(el, null); return null; }
    const block = !/inline/.test(st.display) && st.display !== 'contents';  // -webkit-inline-box is inline too
    const isLink = inLink || el.tagName === 'A';
    const kind = boiler(el, st);
    const bp = inBoiler || !!kind;
    if (st.position === 'fixed' || st.position === 'sticky') fixed.push(el);
    // an iframe's content has its own coordinates: the parent's clip does not apply there
    // a box that hides what sticks out (a carousel) clips it; one that scrolls (a photo strip) does not
    const clips = /^(hidden|clip)$/.test(st.overflowX) && el !== document.body;
    const innerClip = el.tagName === 'IFRAME' ? null : clips ? r : clip;
    const rec = { st, r, block, kind, chars: 0, link: 0, score: 0, inl: 0, inlLink: 0 };
    if (math.holder(el)) {  // a formula counts as the text it reads as; its parts are no text of their own
      rec.math = math.text(el);
      rec.chars = rec.inl = rec.math.text.length;
      if (isLink) rec.link = rec.inlLink = rec.chars;
      info.set(el, rec);
      return rec;
    }
    for (const k of kids(el)) {
      if (k.nodeType === 3) {
        const n = clean(k.data).trim().length;
        rec.chars += n; rec.inl += n;
        if (isLink) { rec.link += n; rec.inlLink += n; }
      } else if (k.nodeType === 1 && !SKIP.has(k.tagName)) {
        const c = measure(k, isLink, bp, innerClip, el.tagName === 'IFRAME' ? el.contentWindow : view);
        if (!c) continue;
        rec.chars += c.chars; rec.link += c.link; rec.score += c.score;
        if (!c.block) { rec.inl += c.inl; rec.inlLink += c.inlLink; }
      }
    }
    if ((block || /^(P|TD|PRE|LI|BLOCKQUOTE|DD)$/.test(el.tagName)) && rec.inl >= 20 && !bp
        && rec.inlLink < rec.inl * 0.5) rec.score += rec.inl - rec.inlLink;
    info.set(el, rec);
    return rec;
  }

  const body = document.body;
  if (!body) return { title: document.title, url: location.href, regions: [], stats: {} };
  measure(body, false, false, null, window);

  function findMain() {
    const total = (info.get(body) || {}).score || 0;
    const landmark = [...document.querySelectorAll('main, [role=main]')].find((el) => info.get(el));
    if (total < 300) return landmark || body;  // too little prose to judge by: trust the markup
    let node = body;
    while (total > 0) {
      let best = null, bs = 0;
      for (const k of kids(node)) {
        const s = k.nodeType === 1 && info.get(k) ? info.get(k).score : 0;
        if (s > bs) { best = k; bs = s; }
      }
      if (!best || bs < 0.8 * total) break;
      node = best;
    }
    return node;
  }

  function findModal() {
    const backdrop = fixed.some((el) => info.get(el) && info.get(el).r.width >= innerWidth * 0.9
      && info.get(el).r.height >= innerHeight * 0.9 && !info.get(el).chars);
    for (const el of document.querySelectorAll('dialog, [role=dialog], [role=alertdialog], [aria-modal=true]')) {
      let modal = false;
      try { modal = el.matches(':modal'); } catch (e) { /* older browsers */ }
      if (info.get(el) && (modal || backdrop || el.getAttribute('aria-modal') === 'true')) return el;
    }
    const hit = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
    let outer = null;
    for (let el = hit; el && el !== body; el = el.parentElement || (el.getRootNode() || {}).host) {
      if (el.tagName === 'DIALOG' || /^(dialog|alertdialog)$/.test(el.getAttribute('role') || '')) return el;
      if (info.get(el) && info.get(el).st.position === 'fixed') outer = el;
    }
    return outer && info.get(outer).chars > 0 && outer.getBoundingClientRect().top > -5 ? outer : null;
  }

  const main = findMain(), modal = findModal();
  G.main = main; G.modal = modal;  // web_execute_js watches their texts for changes
  const overlays = new Set(fixed.filter((el) => el !== modal && info.get(el) && info.get(el).chars > 0
    && !(modal && modal.contains(el)) && !fixed.some((o) => o !== el && o.contains(el))
    && (/cookie|consent|gdpr|privacy|popup|modal|overlay|dialog|toast|notice|alert/i.test(sig(el) + ' ' + (el.getAttribute('role') || ''))
        || /cookie/i.test((el.textContent || '').slice(0, 400)))));

  const ref = (el) => {
    if (textOnly) return '';
    let n = +el.getAttribute('data-ga');
    if (!n || (G.refs.get(n) && G.refs.get(n) !== el)) { n = G.next++; el.setAttribute('data-ga', n); }
    G.refs.set(n, el);
    return n;
  };

  // Pass 2: serialisation.
  const regions = [];
  let cur = null, buf = '', prefix = '', capture = 0, ads = 0, skipped = null, glued = false, notes = null;
  const seenOnPage = new Set();  // boilerplate links shown so far, as name and address
  // Per level (0 main/dialog/overlay, 1 rest of the page, 2 header/nav, 3 other boilerplate):
  const TEXT_CUT = [1e9, 1e9, 100, 60], LABEL_CUT = [300, 300, 60, 40], KEEP = [5, 5, 4, 3], LINK_CAP = [1e9, 1e9, 12, 6];
  const LINE_CAP = [1e9, 1e9, 1e9, 10];
  const IMPORTANCE = { dialog: 0, overlay: 1, main: 2, search: 3, page: 4, header: 5, nav: 5, menu: 5, links: 5, footer: 7 };
  // Links an agent looks for in a menu, shown even past the link cap.
  const KEY_LINK = /\b(log ?in|log ?out|sign ?in|sign ?up|sign ?out|register|account|profile|cart|basket|checkout|search|settings|anmelden|einloggen|registrieren|connexion|iniciar sesi[oó]n|ingresar|entrar)\b/i;
  // Regions of share buttons: web_scan shows them as one line, none at all if they hold no link or control.
  const SHARING = /^(share|sharing|social|byline-share)$/;
  // A link to another site's form for posting this page there (its address in the query), a mail to no one, a
  // messenger's send: outside the content it is counted, not shown.
  const SHARE_PATH = /\/(share|sharer|share\.php|sharer\.php|shareArticle|intent\/tweet|submit|pin\/create(\/\w+)?)\/?$/i;
  // A line holding only an ad label says nothing (the ad itself is dropped as an 'ad' region or image).
  const AD_LABEL = /^(- )?\[?(advertisement|advertising|ads?|anzeige|werbung|publicidad|publicit[eé]|pubblicit[aà]|reklama|sponsored|annonce)\]?(#\d+)?$/i;

  function flush() {
    if (capture) { buf += ' '; return; }
    for (const line of buf.split('\n')) {
      // outside preformatted text, a "<" before a letter is spaced, so that no reader takes "a<b" for a tag
      let t = cur.pre ? line.replace(/\s+$/, '').replace(/(\S) {3,}/g, '$1  ')
        : line.replace(/ {2,}/g, ' ').trim().replace(/<(?=[A-Za-z/!?])/g, '< ');
      if (cur.level >= 2) t = t.replace(/^[|·•](\s|$)|\s[|·•]$/g, '').trim();  // a menu's separators, its items gone
      if (!t.trim() || saysNothing(prefix + t)) continue;
      if (cur.parts.length >= LINE_CAP[cur.level]) { cur.hiddenLines++; continue; }
      if (cur.capped && cur.level >= 3 && !/\]#\d/.test(t)) cur.pastCap.push(cur.parts.length);
      cur.parts.push(prefix + t);
    }
    buf = '';
  }
  // An ad label; outside the main content also the line just before said again (refs aside). The main content
  // keeps its repeats: an article may well say a thing twice.
  function saysNothing(line) {
    if (cur.pre) return false;
    if (AD_LABEL.test(line) && (textOnly || cur.level > 0 || !/#\d/.test(line))) return true;
    if (cur.level >= 2 && !/[\p{L}\p{N}]/u.test(line)) return true;  // in boilerplate: punctuation, bullets
    const norm = (x) => (typeof x === 'string' ? x.replace(/\]#\d+/g, ']') : x);
    return cur.level > 0 && norm(cur.parts[cur.parts.length - 1]) === norm(line);
  }
  // a ref, a superscript or a subscript is kept apart from the word after it ([river system]#12 s, A^H A)
  const add = (s) => {
    if ((glued || /\]#\d+$/.test(buf)) && /^\w/.test(s)) buf += ' ';
    buf += s; glued = false;
  };
  const inline = (s) => { if (buf && !/[\s([]$/.test(buf)) buf += ' '; buf += s; };

  function label(el) {
    const a = el.getAttribute('aria-label') || el.getAttribute('title') || '';
    let t = clean(el.innerText || quiet(el)).trim();
    if (!t) {
      const img = el.querySelector && el.querySelector('img[alt]');
      t = a || (img && img.alt) || el.getAttribute('value') || el.getAttribute('placeholder') || '';
      // a URL is no reading matter; outside the content an unnamed link (an icon, a bare thumbnail) is only counted
      if (!t && el.href) t = textOnly || cur.level >= 2 ? '' : urlLabel(el.href);
    }
    return cut(clean(t).trim(), LABEL_CUT[cur.level]);
  }
  // The text of an element not shown (hidden words naming an icon link), without the source of its scripts, styles
  // and noscript fallbacks (a picture's <img …> markup is no name).
  function quiet(el) {
    if (!el.querySelector || !el.querySelector('script, style, noscript, template')) return el.textContent || '';
    const copy = el.cloneNode(true);
    copy.querySelectorAll('script, style, noscript, template').forEach((x) => x.remove());
    return copy.textContent || '';
  }
  // An unlabelled link named by its target, briefly: host (if elsewhere) and path, no query; 'mailto:' etc. bare.
  function urlLabel(u) {
    try {
      const url = new URL(u, location.href);
      if (!/^https?:$/.test(url.protocol)) return url.protocol;
      if (url.origin === location.origin && url.pathname === location.pathname) return url.hash || '/';
      return cut((url.origin === location.origin ? '' : url.host) + url.pathname.replace(/\/$/, ''), 40) || '/';
    } catch (e) { return cut(u, 40); }
  }
  function shortUrl(u) {
    try {
      const url = new URL(u, location.href);
      if (url.protocol === 'data:' || url.protocol === 'blob:') return url.protocol;
      for (const k of [...url.searchParams.keys()]) if (/^(utm_|fbclid|gclid|mc_|ref$|ref_)/.test(k)) url.searchParams.delete(k);
      const s = url.origin === location.origin ? url.pathname + url.search + url.hash : url.href.replace(/^https?:\/\//, '');
      return cut(s, 60);
    } catch (e) { return cut(u, 60); }
  }

  function control(el) {
    const tag = el.tagName, type = (el.getAttribute('type') || '').toLowerCase();
    const attrs = [];
    const put = (k, v) => { if (v) attrs.push(`${k}=${/[\s"\]]/.test(v) ? JSON.stringify(cut(v, 60)) : cut(v, 60)}`); };
    let head;
    if (tag === 'SELECT') {
      const opts = [...el.options].map((o) => cut(clean(o.text).trim(), 40) + (o.selected ? '*' : ''));
      head = `select${el.multiple ? ' multiple' : ''}`;
      put('name', el.name);
      attrs.push('options: ' + opts.slice(0, 8).join(', ') + (opts.length > 8 ? ` (+${opts.length - 8})` : ''));
    } else if (tag === 'BUTTON' || (tag === 'INPUT' && /^(submit|button|reset|image)$/.test(type))) {
      return `[button: ${label(el) || type}]#${ref(el)}${el.disabled ? ' (disabled)' : ''}`;
    } else if (type === 'checkbox' || type === 'radio') {
      head = `${type}${el.checked ? ' checked' : ''}`;
      put('name', el.name); put('value', el.value !== 'on' ? el.value : '');
    } else {
      head = tag === 'TEXTAREA' ? 'textarea' : `input${type && type !== 'text' ? ' ' + type : ''}`;
      put('name', el.name || el.id); if (el.placeholder.toLowerCase() !== (el.name || el.id).toLowerCase()) put('placeholder', el.placeholder);
      const named = (el.getAttribute('aria-label') || '').trim(), same = (v) => (v || '').trim().toLowerCase() === named.toLowerCase();
      if (!same(el.placeholder) && !same(el.name || el.id)) put('label', named);  // said once
      put('value', type === 'password' && el.value ? '••••' : el.value);
    }
    if (el.disabled) attrs.push('disabled');
    if (el.required) attrs.push('required');
    return `[${[head, ...attrs].join(' ')}]#${ref(el)}`;
  }

  // Repeated items worth folding: element children alike in tag and class, no loose text between them,
  // not prose; in the main content only link-rich lists (feeds, menus, results), never paragraphs.
  const PROSE = /^(P|BR|H[1-6]|PRE|BLOCKQUOTE|FIGURE|IMG|B|I|EM|STRONG|FONT|SPAN|SUP|SUB|CODE|SMALL)$/;
  function similarChildren(el, min) {
    const items = [...el.children].filter((k) => info.get(k));
    if (items.length < min) return null;
    let loose = 0;
    for (const k of el.childNodes) if (k.nodeType === 3) loose += k.data.trim().length;
    if (loose > 20) return null;
    const counts = new Map();
    for (const k of items) { const s = k.tagName + '.' + (k.classList ? k.classList[0] || '' : ''); counts.set(s, (counts.get(s) || 0) + 1); }
    const [top, n] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0];
    if (n < 0.7 * items.length || PROSE.test(top.split('.')[0])) return null;
    const rec = info.get(el);
    if (cur.level < 2 && (rec.link < 0.3 * rec.chars || rec.chars > 600 * items.length)) return null;
    return items.some((k) => k.contains(main) || (modal && k.contains(modal))) ? null : items;
  }

  function renderList(el, items) {
    const keep = KEEP[cur.level];
    flush();
    for (const k of items.slice(0, keep)) { walk(k); if (buf.length > 60) flush(); }
    flush();
    const n = ref(el) || 0, tail = items.slice(keep);
    const sel = `document.querySelectorAll('[data-ga="${n}"] > ${items[keep].tagName.toLowerCase()}')`;
    const note = `(… ${tail.length} more similar items hidden; all ${items.length}: ${sel})`;
    const rec = info.get(el), feed = items.length >= 30 && rec.link >= 0.6 * rec.chars;  // links only: fold now
    if (cur.level >= 2 && tail.reduce((c, k) => c + info.get(k).chars + 12, 0) <= note.length) {
      for (const k of tail) { walk(k); if (buf.length > 60) flush(); }  // a note would cost more than it hides
      flush();
      return;
    }
    if (cur.level >= 2) {  // boilerplate: the region's closing note counts what is hidden and says how to reach it
      cur.folded += tail.length;
      const CTRL = 'a[href], button, input, select, textarea';
      for (const k of tail) {  // links that only scroll are left out, not counted
        const all = [k, ...k.querySelectorAll(CTRL)].filter((x) => x.matches(CTRL));
        const n = all.filter((x) => x.tagName !== 'A' || !inPage(x, clean(x.innerText || '').trim())).length;
        if (n) cur.hiddenLinks += n; else if (!all.length) cur.hiddenLines++;
      }
      return;
    }
    if (feed) { cur.parts.push(note); cur.folded += tail.length; tail.forEach(countRefs); return; }
    cur.parts.push({ rest: tail.map(renderItem), total: items.length, selector: textOnly ? '' : sel });
  }
  // One folded item as text (nested folds expanded): web_scan decides how many of them fit.
  function renderItem(k) {
    const mark = cur.parts.length;
    if (k.tagName === 'TR') renderRow(k); else { walk(k); flush(); }
    return cur.parts.splice(mark).map((p) => (typeof p === 'string' ? p : p.rest.join('\n'))).join('\n');
  }
  function renderRow(r) {
    const cells = [];
    capture++;
    for (const c of r.cells) { if (!info.get(c)) continue; buf = ''; walk(c); cells.push(buf.replace(/\s+/g, ' ').trim()); }
    capture--;
    buf = cells.join(' | ');
    flush();
  }
  function countRefs(el) {
    if (textOnly) return;
    for (const x of el.querySelectorAll('a[href], button, input, select, textarea')) if (info.get(x)) cur.refs.push(ref(x));
  }

  function renderTable(el) {
    const rows = [...el.rows].filter((r) => info.get(r));
    const layout = el.getAttribute('role') === 'presentation' || el.querySelector('table') || rows.length < 2
      || rows.some((r) => [...r.cells].some((c) => (info.get(c) || {}).chars > 400));
    if (layout) return false;
    flush();
    const body = el.tBodies[0];
    const items = body && similarChildren(body, cur.level >= 2 ? 8 : 12);
    if (el.caption && info.get(el.caption)) { walk(el.caption); flush(); }
    const split = items ? new Set(items) : null;
    const folded = [];
    for (const r of rows) {
      if (split && split.has(r) && items.indexOf(r) >= KEEP[cur.level]) folded.push(r); else renderRow(r);
    }
    if (folded.length) {
      const n = ref(body) || 0, note = `(… ${folded.length} more rows hidden: document.querySelectorAll('[data-ga="${n}"] > tr'))`;
      if (cur.level >= 2) { cur.parts.push(note); cur.folded += folded.length; folded.forEach(countRefs); return true; }
      cur.parts.push({ rest: folded.map(renderItem), total: items.length, selector: textOnly ? '' : `document.querySelectorAll('[data-ga="${n}"] > tr')` });
    }
    return true;
  }

  function regionKind(el) {
    if (el === modal) return 'dialog';
    if (overlays.has(el)) return 'overlay';
    if (el === main) return 'main';
    const rec = info.get(el);
    if (!rec || (cur.level >= 2 && cur.kind !== 'links')) return null;  // none nested in marked-up boilerplate
    if (!rec.kind) return cur.kind === 'page' && linkBlock(el, rec) ? 'links' : null;
    return rec.kind === 'header' && main.contains(el) && main !== body ? null : rec.kind;
  }
  // A block of the rest of the page that is mostly links (menus, teasers, "most read") is navigation whatever
  // its markup says: it is folded like a nav region and left out of text_only.
  function linkBlock(el, rec) {
    if (!rec.block || rec.chars - rec.link > Math.max(30, 0.3 * rec.chars)) return false;  // icon links count too
    if (el.contains(main) || (modal && el.contains(modal)) || [...overlays].some((o) => el.contains(o))) return false;
    return el.querySelectorAll('a[href]').length >= 5;
  }

  function enter(el, kind) {
    flush();
    const saved = [cur, prefix], rec = info.get(el);
    if (kind === 'ad') { ads++; return; }
    const name = el.getAttribute('aria-label') || (el.querySelector('h1,h2,h3') || {}).textContent || '';
    const level = /^(main|dialog|overlay)$/.test(kind) ? 0 : /^(header|nav|menu|search|links)$/.test(kind) ? 2 : 3;
    cur = newRegion(el, kind, level, name);
    regions.push(cur);
    prefix = '';
    interactiveOrBlock(el, rec);
    flush();
    // a footer or sidebar past its link cap is cut there: its text from then on (its links gone) is only counted,
    // unless that says less than the count would
    const past = new Set(cur.pastCap);
    if (cur.hiddenLines || [...past].reduce((n, i) => n + cur.parts[i].length, 0) > 40) {
      cur.parts = cur.parts.filter((p, i) => !past.has(i));
      cur.hiddenLines += past.size;
    }
    const dropped = [], kept = [], only = (p) => typeof p === 'string' && /^(- )?(\[[^\]]*\]#\d+ ?)+$/.test(p);
    if (level >= 2) {  // then a menu's lines of links only are one line
      for (const p of [...cur.parts].reverse()) (emptyHeading(p, kept[kept.length - 1]) ? dropped : kept).push(p);
      cur.parts = kept.reverse().reduce((a, p) => a.concat(only(p) && only(a[a.length - 1])
        ? `${a.pop().replace(/^- /, '')} ${p.replace(/^- /, '')}` : [p]), []);
    }
    const said = (p) => typeof p === 'string' && p.includes(cur.label);  // a name taken from a heading shown (or dropped)
    if (cur.label && !el.getAttribute('aria-label') && [...cur.parts, ...dropped].some(said)) cur.label = '';
    if (cur.hiddenLines || cur.hiddenLinks) cur.note = cur.parts.push('') - 1;  // written once all are known
    [cur, prefix] = saved;
  }
  // A region's closing note counts what it hides; how to reach it (innerText, querySelectorAll) is said once a scan,
  // in the first note shown (notes are in boilerplate, shown in the order of the regions).
  function closingNotes() {
    let toldText = false, toldLinks = false;
    for (const r of regions) {
      if (r.note === undefined) continue;
      const more = [r.hiddenLines && `${r.hiddenLines} more lines`, r.hiddenLinks && `${r.hiddenLinks} more links/controls`];
      const how = [r.hiddenLines && !toldText && '.innerText', !toldLinks && ".querySelectorAll('a, button')"].filter(Boolean);
      toldText ||= !!r.hiddenLines; toldLinks = true;
      const where = how.map((h) => `$ga(${r.ref})${h}`).join(', ') || `$ga(${r.ref})`;
      r.parts[r.note] = `(+${more.filter(Boolean).join(', ')}: ${where})`;
    }
  }
  // In boilerplate a heading with nothing under it (a menu's section whose links were said already) says nothing;
  // judged from the last line up, so that a section holding only such headings goes too.
  const depth = (line) => (/^(#{1,6}) /.exec(line || '') || ['', ''])[1].length;
  const emptyHeading = (line, next) => depth(line) > 0 && !/\]#\d/.test(line)
    && (!next || (depth(next) > 0 && depth(next) <= depth(line)));
  function newRegion(el, kind, level, name) {
    return { el, kind, level, label: cut(clean(name).trim(), 50), ref: ref(el), parts: [], refs: [], folded: 0, links: 0,
      hiddenLinks: 0, hiddenLines: 0, pastCap: [], seen: new Set(), lastHref: '', lastLabel: '', sinceLink: 0, pre: false,
      covered: !!modal && kind !== 'dialog', chars: info.get(el).chars, importance: IMPORTANCE[kind] ?? 6 };
  }

  function clickable(el, rec) {
    const role = el.getAttribute('role') || '';
    if (CLICK_ROLES.test(role)) return role;
    if (el.hasAttribute('onclick') || el.isContentEditable && !el.parentElement.isContentEditable) return el.isContentEditable ? 'editable' : 'clickable';
    const parent = el.parentElement && info.get(el.parentElement);
    return rec.st.cursor === 'pointer' && parent && parent.st.cursor !== 'pointer' && rec.chars < 80 && rec.chars > 0 ? 'clickable' : '';
  }

  function walk(node) {
    if (node.nodeType === 3) {
      const t = cur.pre ? node.data : clean(node.data);
      if (t.trim()) cur.sinceLink++;
      add(cut(t, TEXT_CUT[cur.level]));
      return;
    }
    if (node.nodeType !== 1 || SKIP.has(node.tagName) || node === skipped) return;
    const rec = info.get(node);
    if (!rec) return;
    const kind = regionKind(node);
    if (kind && node !== cur.el) enter(node, kind); else interactiveOrBlock(node, rec);
  }

  function interactiveOrBlock(el, rec) {
    const tag = el.tagName;
    if (rec.math) {
      if (rec.math.display) flush();
      inline(`$${rec.math.text}$`);
      if (rec.math.display) flush();
      return;
    }
    if ((tag === 'SUP' || tag === 'SUB') && scriptText(el)) { add(scriptText(el)); glued = true; return; }
    if (tag === 'A' && (el.hasAttribute('href') || el.hasAttribute('onclick'))) {
      if (cur.level < 2 && blockLink(el, rec)) { renderBlockLink(el); return; }
      const head = cur.level >= 2 && cardHeading(el);  // a card in a menu or sidebar is named by its heading
      const l = head ? cut(cardTitle(el, head), LABEL_CUT[cur.level]) : label(el);
      const place = inPage(el, l);
      if (place) {  // in boilerplate (a skip link, the contents beside the text) left out: web_scan shows it all
        const t = clean(el.innerText || '').trim(), words = /[\p{L}\p{N}]/u.test(t);
        if (cur.level < 2 && words && !place.contains(main)) { inline(cut(t, LABEL_CUT[cur.level])); glued = true; }
        return;
      }
      if (!l) { if (cur.level >= 2 && !textOnly) cur.hiddenLinks++; return; }
      if (cur.level > 0 && /^powered by\b/i.test(l)) return;  // a platform's credit is no way on
      if (cur.level > 0 && !SHARING.test(cur.kind) && shareLink(el)) {  // counted here, so said (as counted) once
        if (!textOnly) cur.hiddenLinks++;
        seenOnPage.add(`${l.toLowerCase()} ${el.href}`);
        return;
      }
      if (repeatLink(el, l)) return;
      if (shownBefore(l, el.href)) { cur.links++; return; }  // a repeat counts against the region's cap
      if (textOnly || linkedBefore(el, l) || (notes && notes.push(ref(el)))) { inline(l); glued = true; }  // a word after it stays apart
      else if (++cur.links > LINK_CAP[cur.level] && !KEY_LINK.test(l)) { cur.hiddenLinks++; cur.capped = true; }
      else { inline(`[${l}]#${ref(el)}${covered(el, rec)}`); cur.refs.push(+el.dataset.ga); }
      return;
    }
    if (/^(BUTTON|INPUT|SELECT|TEXTAREA)$/.test(tag)) {
      cur.sinceLink++;
      if (textOnly || (tag === 'INPUT' && el.type === 'hidden')) return;
      const c = control(el);
      if (!shownBefore(c.replace(/#\d+$/, ''))) { inline(c + covered(el, rec)); cur.refs.push(+el.dataset.ga); }
      return;
    }
    if (tag === 'BR') { flush(); return; }
    if (tag === 'IFRAME' && !kids(el).length) {
      if (!textOnly && rec.r.width * rec.r.height >= 40000) inline(`[iframe ${shortUrl(el.src).split('/')[0]} (other site, unreadable)]#${ref(el)}`);
      return;
    }
    const role = !textOnly && clickable(el, rec);
    if (role && rec.chars < 200) {
      const c = `[${role}: ${label(el)}]`;
      if (!shownBefore(c)) { inline(`${c}#${ref(el)}${covered(el, rec)}`); cur.refs.push(+el.dataset.ga); }
      return;
    }
    if (tag === 'TABLE' && renderTable(el)) return;
    const h = /^H([1-6])$/.exec(tag);
    const block = (rec.block && rec.chars > 0) || h || tag === 'LI';  // an empty box (an icon) breaks no line
    if (block) flush();
    const savedPrefix = prefix, savedPre = cur.pre;
    if (h) prefix = '#'.repeat(+h[1]) + ' ';
    else if (tag === 'LI' && !capture) prefix = '- ';
    if (tag === 'PRE' || /^pre/.test(rec.st.whiteSpace)) cur.pre = true;
    if (rec.st.display.startsWith('inline-')) inline('');
    const items = similarChildren(el, cur.level >= 2 ? 8 : 12), list = !notes && !textOnly && notesList(el) && (notes = []);
    if (items && !capture) renderList(el, items); else for (const k of kids(el)) walk(k);
    if (block) flush();
    if (list) [notes, cur.refs] = [null, cur.refs.concat(list)];
    if (list && list.length) cur.parts.push(`(links in these notes: document.querySelectorAll('[data-ga="${ref(el)}"] a'))`);
    prefix = savedPrefix; cur.pre = savedPre;
  }

  // x<sup>2</sup> reads x^2 and a<sub>i</sub> a_i; a footnote mark ([1]) or a linked one stays as it is.
  function scriptText(el) {
    const t = clean(el.textContent).trim();
    if (!t || t.length > 12 || /^\[.*\]$/.test(t) || el.querySelector('a')) return '';
    return (el.tagName === 'SUP' ? '^' : '_') + (/\s/.test(t) ? `(${t})` : t);
  }

  // A link that wraps a block of content (a card: title, summary, tags) is content, not a label: its ref with its
  // heading (or first words), then the rest of its text as lines. Outside the content (a menu or sidebar of cards)
  // it is a link like any other, named by its heading, its label cut and counted against the region's cap.
  function blockLink(el, rec) {
    return rec.chars > 100 && (rec.block || [...el.children].some((k) => (info.get(k) || {}).block));
  }
  const cardHeading = (el) => [...el.querySelectorAll('h1, h2, h3, h4, h5, h6, [role=heading]')].find((h) => info.get(h));
  const cardTitle = (el, head) => clean((head || el).innerText || quiet(head || el)).trim();
  function renderBlockLink(el) {
    flush();
    const head = cardHeading(el), l = cut(cardTitle(el, head), 100);
    const twin = el.href === cur.lastHref && l === cur.lastLabel && !cur.sinceLink;  // its picture's link said it
    [cur.lastHref, cur.lastLabel, cur.sinceLink] = [el.href, l, 0];
    if (!textOnly && !twin) { inline(`[${l}]#${ref(el)}`); cur.refs.push(+el.dataset.ga); flush(); }
    skipped = textOnly ? null : head;
    for (const k of kids(el)) walk(k);
    skipped = null;
    flush();
  }

  // A link to a shown place on this page (a footnote mark, its back-link, a contents entry, a section number)
  // only scrolls: in the content it reads as its text, without a ref; one without words (^, ¶, an empty anchor)
  // or to the content itself (a skip link) is left out. A mark (at most 8 characters, in a superscript or without
  // letters) counts whatever the address before its '#': pages reached through a query or saved elsewhere keep the
  // original's. Returns the place, if it is one.
  function inPage(el, l) {
    const h = el.getAttribute('href') || '', at = h.indexOf('#');
    if (at < 0 || at === h.length - 1 || el.hasAttribute('onclick') || el.hasAttribute('role')
        || ['aria-controls', 'aria-expanded', 'data-toggle', 'data-bs-toggle'].some((a) => el.hasAttribute(a))) return null;
    let target = null;
    try {
      const id = decodeURIComponent(h.slice(at + 1));
      target = document.getElementById(id) || document.getElementsByName(id)[0];
    } catch (e) { return null; }  // a malformed escape
    if (!target || !target.getClientRects().length) return null;
    const base = (u) => (u || '').split('#')[0], canonical = document.querySelector('link[rel=canonical]');
    if (at === 0 || base(el.href) === base(location.href) || (canonical && base(el.href) === base(canonical.href))) return target;
    return l.length <= 8 && (!/\p{L}/u.test(l) || !!el.closest('sup')) && target;
  }

  // A list in the content whose items are mostly places a mark links to ([1], 2, *: footnotes, references) holds
  // sources an agent seldom opens: its links read as text, reached through one note under it.
  let marked = null;
  function notesList(el) {
    if (cur.level > 0 || !/^(OL|UL)$/.test(el.tagName) || el.querySelectorAll('a[href]').length < 8) return false;
    marked ||= new Set([...document.querySelectorAll('a[href*="#"]')]
      .filter((a) => clean(a.textContent).trim().length <= 8).map((a) => a.getAttribute('href').split('#').pop()));
    const items = [...el.children].filter((k) => info.get(k));
    return items.length >= 2 && items.filter((k) => k.id && marked.has(k.id)).length >= items.length / 2;
  }

  // A link straight after one to the same place (teaser title, image, summary, "more…") is said once: outside the
  // main content whatever its label; inside it only in text_only and with the same label (refs stay in main).
  function repeatLink(el, l) {
    const same = !!el.href && el.href === cur.lastHref && !cur.sinceLink;
    const twin = same && l === cur.lastLabel;
    [cur.lastHref, cur.lastLabel, cur.sinceLink] = [el.href, l, 0];
    return cur.level > 0 ? same : textOnly && twin;
  }

  // A link that posts this page elsewhere (SHARE_PATH).
  function shareLink(el) {
    try {
      const u = new URL(el.href);
      if (u.protocol === 'mailto:') return !u.pathname;
      if (u.protocol === 'whatsapp:') return true;
      return u.host !== location.host && SHARE_PATH.test(u.pathname) && /https?(:|%3A)|www\./i.test(u.search);
    } catch (e) { return false; }
  }

  // In the content (and the rest of the page) a link that goes where an earlier one of the same name went reads as
  // text: the first ref serves.
  function linkedBefore(el, l) {
    if (cur.level > 1 || !el.href) return false;
    const key = `${l} ${el.href}`;
    return cur.seen.has(key) || !cur.seen.add(key);
  }

  // In boilerplate a link or control that reads like one already shown in the region, or a link that goes where one
  // of another boilerplate region went under the same name, is said once (menus repeated for small screens, a footer
  // repeating the header, share buttons twice); the region's closing note counts its own repeats. The rest of the
  // page may hold content (a breadcrumb repeating the menu), so it keeps its repeats.
  function shownBefore(key, href = '') {
    if (cur.level < 2) return false;
    key = key.toLowerCase();  // Privacy Policy, Privacy policy
    const where = `${key} ${href}`;  // controls have no address: only their region's repeats go
    if (cur.seen.has(key)) { if (!textOnly) cur.hiddenLinks++; return true; }
    if (href && seenOnPage.has(where)) return true;  // shown, so not counted as hidden
    cur.seen.add(key); seenOnPage.add(where);
    return false;
  }

  function covered(el, rec) {
    if (modal || textOnly) return '';
    const r = rec.r;
    if (r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth) return '';
    const root = el.getRootNode(), doc = root.elementFromPoint ? root : document;
    const hit = doc.elementFromPoint(Math.min(innerWidth - 1, r.left + r.width / 2), Math.min(innerHeight - 1, r.top + r.height / 2));
    if (!hit || el.contains(hit) || hit.contains(el)) return '';
    for (const o of overlays) if (o.contains(hit)) return ` (covered by #${ref(o)})`;
    return '';
  }

  cur = main === body ? newRegion(body, 'main', 0, '') : newRegion(body, 'page', 1, '');
  Object.assign(cur, { label: '', covered: !!modal });
  regions.push(cur);
  for (const k of kids(body)) walk(k);
  flush();
  if (cur.hiddenLinks) cur.note = cur.parts.push('') - 1;
  closingNotes();

  const out = regions.filter((r) => r.parts.length && (textOnly || r.refs.length || !SHARING.test(r.kind)))
    .map(({ el, level, links, pre, note, pastCap, capped, ...r }) => r);
  return {
    title: document.title, url: location.href, modal: !!modal,
    regions: out, type: document.contentType, textChars: body.innerText.length,
    stats: { ms: Math.round(performance.now() - started), elements: info.size, ads },
  };
}
