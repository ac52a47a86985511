// Formulas for web_scan (page_scan.js): MathML, KaTeX, MathJax 2 and 3, and Wikipedia's math markup draw their
// glyphs in ways that are no readable text (hidden MathML, aria-hidden spans, CSS content, images). Each formula
// becomes plain text: its TeX source where the page kept one, else its MathML linearised (x^2, a_i, (a)/(b), √(x)).
// Evaluated as a function that returns the helpers: () => ({ holder, text }).
() => {
  const HOLDER = /(^|\s)(katex|mwe-math-element|MathJax|MathJax_Display|MathJax_CHTML|MathJax_SVG)(\s|$)/;
  const SPACED = /^[=+\-−±∓×·÷<>≤≥≠≈≡∼∝→←↔⇒⇔∈∉⊂⊆⊃⊇∪∩∧∨|]$/;
  const ACCENTS = { '^': 'hat', 'ˆ': 'hat', '¯': 'bar', '‾': 'bar', '~': 'tilde', '˜': 'tilde', '→': 'vec', '⃗': 'vec',
    '˙': 'dot', '¨': 'ddot' };
  const clean = (s) => s.replace(/\s+/g, ' ').trim();

  // The outermost element that stands for one formula.
  const holder = (el) => el.localName === 'math' || el.tagName === 'MJX-CONTAINER'
    || HOLDER.test(typeof el.className === 'string' ? el.className : '');

  // {text, display}: the formula as text, and whether it is set on its own line. Its TeX source when the page
  // kept it (KaTeX, Wikipedia, MathJax 2), else its MathML linearised (MathJax 3, plain MathML).
  function text(el) {
    const ml = el.localName === 'math' ? el : el.querySelector('math');
    const ann = el.querySelector('annotation[encoding*="tex" i]');
    const img = el.querySelector('img[alt]');
    const frame = el.id && el.id.endsWith('-Frame') && document.getElementById(el.id.slice(0, -6));
    const tex = ann ? ann.textContent : (ml && ml.getAttribute('alttext')) || (img && img.alt) || (frame && frame.textContent);
    const out = tex ? tidy(clean(tex).replace(/^\{\\(display|text)style\s*(.*)\}$/s, '$2')) : ml ? node(ml) : el.textContent;
    const display = (ml && ml.getAttribute('display') === 'block') || el.getAttribute('display') === 'true'
      || /katex-display|MathJax_Display/.test((el.parentElement && el.parentElement.className) || '')
      || /MathJax_Display/.test(typeof el.className === 'string' ? el.className : '');
    // "j<k" would read as the start of a tag to anything that parses the result as HTML: "j < k"
    return { text: clean(out).replace(/\s*<\s*(?=\S)/g, ' < '), display };
  }

  // TeX as a reader needs it: no style switches, font commands or spacing commands, whose words and
  // backslashes cost tokens and hide the formula's words (Wikipedia's `A{\text{ Hermitian}}\quad \iff`).
  function tidy(tex) {
    let out = tex.replace(/\\(display|text|script)style\s*/g, '').replace(/\\q?quad\b|\\[,;:!> ]/g, ' ')
      .replace(/\\(left|right|[bB]igg?)[lr]?\s*(?=[()[\]|.]|\\[{}|])/g, '');
    for (let i = 0; i < 3; i++) {  // nested ones from the inside out
      out = out.replace(/\\(text|math(rm|sf|bf|it|tt)|textrm|textbf|textit|operatorname)\s*\{([^{}]*)\}/g, '{$3}');
    }
    // braces round plain text that no command, sub- or superscript takes as its argument: A{ Hermitian} -> A Hermitian
    for (let i = 0; i < 3; i++) out = out.replace(/(?<!\\[a-zA-Z]+\s*|[_^}\]]\s*)\{([^{}\\]*)\}/g, ' $1 ');
    return clean(out).replace(/([_^{]) | (?=})/g, '$1');
  }

  function node(n) {
    if (n.nodeType === 3) return clean(n.data);
    if (n.nodeType !== 1) return '';
    const kids = [...n.children];
    const group = (k) => { const s = k ? node(k) : ''; return /^[\p{L}\p{N}.]+$|^.$/u.test(s) ? s : `(${s})`; };
    switch (n.localName) {
      case 'annotation': case 'annotation-xml': case 'mphantom': case 'none': case 'mprescripts': return '';
      case 'semantics': return kids.length ? node(kids[0]) : '';
      case 'mi': case 'mn': case 'mo': case 'mtext': case 'ms': return clean(n.textContent);
      case 'mspace': return ' ';
      case 'msup': return `${group(kids[0])}^${group(kids[1])}`;
      case 'msub': return `${group(kids[0])}_${group(kids[1])}`;
      case 'msubsup': return `${group(kids[0])}_${group(kids[1])}^${group(kids[2])}`;
      case 'mfrac': return `${group(kids[0])}/${group(kids[1])}`;
      case 'msqrt': return `√(${row(kids)})`;
      case 'mroot': return `root(${node(kids[1])}, ${node(kids[0])})`;
      case 'mover': case 'munder': case 'munderover': return script(n.localName, kids, group);
      case 'mtable': return `[${kids.map((r) => [...r.children].map((c) => row([...c.children])).join(', ')).join('; ')}]`;
      default: return row(kids);  // math, mrow, mstyle, mpadded, menclose, mtd ...
    }
  }

  function script(tag, kids, group) {
    const accent = tag === 'mover' && kids[1] && ACCENTS[clean(kids[1].textContent)];
    if (accent) return `${accent}(${node(kids[0])})`;
    const below = tag === 'mover' ? '' : node(kids[1]);
    const above = tag === 'mover' ? node(kids[1]) : tag === 'munderover' ? node(kids[2]) : '';
    return node(kids[0]) + (below ? `_${group(kids[1])}` : '') + (above ? `^${group(kids[tag === 'mover' ? 1 : 2])}` : '');
  }

  // Operators spaced, two atoms side by side kept apart (a x, not ax), brackets tight.
  function row(kids) {
    let out = '';
    for (const k of kids) {
      const s = node(k);
      if (!s) continue;
      if (k.localName === 'mo' && SPACED.test(s)) out = `${out.trimEnd()} ${s} `;
      else if (k.localName !== 'mo' && /[\p{L}\p{N})\]]$/u.test(out) && /^[\p{L}\p{N}√(]/u.test(s)) out += ` ${s}`;
      else out += s;
    }
    return clean(out);
  }

  return { holder, text };
}
