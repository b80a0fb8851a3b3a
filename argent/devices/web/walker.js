// The page-side UI-tree walker argent's browser devices share (plain DOM, engine-neutral).
//
// Evaluated as `(<this function>)(maxDepth, maxNodes, keep, query)` in one evaluation (returned by
// value). `query` is { css: [<CSS selector>, ...], text: <longest text kept>, labelNodes: <nodes a
// label's text may visit> }. It walks the composed tree from document.documentElement — child nodes,
// open shadow roots (through their slots), same-origin iframe documents — and returns
//   { tree: <node>, truncated, scroll: <offsets of scrollable elements>, w: innerWidth, h: innerHeight,
//     blank?: <why nothing on the screen is visible> }
// or { tree: null, error } / { tree: null, cssError: { selector, message } } (a selector the engine
// refused). A node is { role?, kind?, frame: [x, y, w, h] (fractions of the viewport, clamped to
// [0, 1]), label?, value?, desc?, identifier?, clickable?, disabled?, checked?, password?, scrollable?,
// focused?, css?: [<indices into query.css>], children? } with falsy fields left out.
//   role: the ARIA role — the element's own `role` (its first token), else its implicit role
//         (HTML-AAM: button, link for a[href], textbox, heading, list, ...), else "".
//   kind: what the element is called where upstream's flows named it: its `role` attribute, else its
//         tag name; left out where it is the role.
//   label: the accessible name (accname: aria-labelledby, aria-label, <label>, alt, legend, caption,
//          the contents for roles named from content, title, placeholder).
//   value: a field's value, else the element's own text.
//   desc: the element's placeholder or title where that is not its name.
//   text: the element's text as a person reads it (its text nodes and its children's text in
//         document order, inline runs joined as shown), only where that is not its own text followed
//         by its children's: it has a text node after a child that gave text (a highlighted code line:
//         `<span>select</span> id, <span>year</span>`); left out where it is the label.
// With `keep` (only in argent's isolated world, where the page cannot see it), each node also
// carries `ref`, its element's index in `globalThis.__argentRefs`, so a later call can act on the
// very element (scroll it into view).
//
// Visible is what a person sees: a non-empty box, intersecting the viewport, not hidden by
// `display`, `visibility` or `opacity: 0`. An element's frame is its box clipped by what really
// clips it: ancestors whose overflow is not `visible` clip their in-flow descendants; an absolutely
// positioned element escapes clipping ancestors below its containing block (its nearest positioned,
// transformed or contained ancestor), a fixed one all but those below its own (the viewport, or a
// transformed ancestor); `overflow` on <html>, and on <body> when <html> leaves it visible, belongs
// to the viewport and clips nothing; `clip` and `clip-path` clip the element and all it holds.
// An element clipped away keeps its place in the tree with an empty frame (a scroll-to can still
// bring an off-screen one into view).
// In argent's world (where `globalThis.__argentFrameIds`, a WeakMap, exists) an iframe whose
// document the walk cannot enter (another origin, maybe another process) carries `sub: { at: [x, y],
// clip: [l, t, r, b], key, id? }`: its content box's origin and visible part in this viewport's CSS
// px, its index in `globalThis.__argentFrameEls`, and its frame id once the device put it in the
// WeakMap. The device walks that frame on its own and puts its tree there (frames.py, stitch.py).
//
// DOM reads go through getters captured from the prototypes up front, so a page that shadows
// a property (a <form> with a control named "children" or "id") cannot derail the walk.
(function (maxDepth, maxNodes, keep, query) {
  "use strict";
  const W = window.innerWidth;
  const H = window.innerHeight;
  if (!(W > 0 && H > 0)) {
    return { tree: null, error: "the viewport is zero (w=" + W + ", h=" + H + ")", w: W, h: H };
  }
  const cssList = query && query.css ? query.css : [];
  const MAX_TEXT = query && query.text > 0 ? query.text : 200;
  const LABEL_NODES = query && query.labelNodes > 0 ? query.labelNodes : 200;
  const TEXT_CAP = MAX_TEXT * 4;

  const apply = Reflect.apply;
  const getter = function (proto, name) {
    const d = proto ? Object.getOwnPropertyDescriptor(proto, name) : undefined;
    return d && d.get ? d.get : null;
  };
  const read = function (fn, self) {
    return fn ? apply(fn, self, []) : undefined;
  };
  const EL = Element.prototype;
  const getAttribute = EL.getAttribute;
  const hasAttribute = EL.hasAttribute;
  const matches = EL.matches;
  const boundingRect = EL.getBoundingClientRect;
  const elChildren = getter(EL, "children");
  const shadowRootOf = getter(EL, "shadowRoot");
  const localNameOf = getter(EL, "localName");
  const clientWidthOf = getter(EL, "clientWidth");
  const clientHeightOf = getter(EL, "clientHeight");
  const scrollWidthOf = getter(EL, "scrollWidth");
  const scrollHeightOf = getter(EL, "scrollHeight");
  const childNodesOf = getter(Node.prototype, "childNodes");
  const nodeTypeOf = getter(Node.prototype, "nodeType");
  const textContentOf = getter(Node.prototype, "textContent");
  const ownerDocumentOf = getter(Node.prototype, "ownerDocument");
  const getRootNode = Node.prototype.getRootNode;
  const dataOf = getter(CharacterData.prototype, "data");
  const docActive = getter(Document.prototype, "activeElement");
  const shadowActive = getter(ShadowRoot.prototype, "activeElement");
  const docById = Document.prototype.getElementById;
  const fragById = DocumentFragment.prototype.getElementById;
  const docQuery = Document.prototype.querySelectorAll;
  const fragQuery = DocumentFragment.prototype.querySelectorAll;
  const scrollingElementOf = getter(Document.prototype, "scrollingElement");
  const documentElementOf = getter(Document.prototype, "documentElement");
  const bodyOf = getter(Document.prototype, "body");
  const readyStateOf = getter(Document.prototype, "readyState");
  const inputValue = getter(HTMLInputElement.prototype, "value");
  const inputType = getter(HTMLInputElement.prototype, "type");
  const inputChecked = getter(HTMLInputElement.prototype, "checked");
  const textareaValue = getter(HTMLTextAreaElement.prototype, "value");
  const selectedOptionsOf = getter(HTMLSelectElement.prototype, "selectedOptions");
  const selectMultiple = getter(HTMLSelectElement.prototype, "multiple");
  const selectSize = getter(HTMLSelectElement.prototype, "size");
  const iframeDocument = getter(HTMLIFrameElement.prototype, "contentDocument");
  const assignedNodes = HTMLSlotElement.prototype.assignedNodes;
  const computedStyle = window.getComputedStyle;
  const createRange = Document.prototype.createRange;

  const SKIP = { head: 1, script: 1, style: 1, template: 1, noscript: 1, meta: 1, link: 1, title: 1, base: 1 };
  // Elements whose children the walk does not enter (a <select>'s value is its chosen option).
  const LEAF_TAGS = { select: 1, textarea: 1, input: 1 };
  const CLICKABLE_TAGS = { button: 1, select: 1, textarea: 1, summary: 1 };
  const CLICKABLE_ROLES = {
    button: 1, link: 1, tab: 1, menuitem: 1, menuitemcheckbox: 1, menuitemradio: 1,
    checkbox: 1, radio: 1, switch: 1, option: 1,
  };
  // Roles named from their contents (WAI-ARIA 1.2), and tags so named where they are clickable.
  const CONTENT_ROLES = {
    button: 1, cell: 1, checkbox: 1, columnheader: 1, gridcell: 1, heading: 1, link: 1, menuitem: 1,
    menuitemcheckbox: 1, menuitemradio: 1, option: 1, radio: 1, row: 1, rowheader: 1, switch: 1, tab: 1,
    tooltip: 1, treeitem: 1,
  };
  const CONTENT_TAGS = { a: 1, summary: 1, label: 1 };
  const NO_VALUE_INPUTS = { password: 1, checkbox: 1, radio: 1, file: 1, hidden: 1, image: 1 };
  const BUTTON_INPUTS = { button: 1, submit: 1, reset: 1, image: 1 };
  const TEXT_INPUTS = { text: 1, email: 1, tel: 1, url: 1, password: 1 };
  // HTML-AAM: the implicit role of a tag that always has the same one.
  const TAG_ROLES = {
    article: "article", aside: "complementary", blockquote: "blockquote", button: "button",
    caption: "caption", datalist: "listbox", dd: "definition", details: "group", dfn: "term",
    dialog: "dialog", dt: "term", fieldset: "group", figure: "figure", h1: "heading", h2: "heading",
    h3: "heading", h4: "heading", h5: "heading", h6: "heading", hr: "separator", li: "listitem",
    main: "main", math: "math", menu: "list", meter: "meter", nav: "navigation", ol: "list",
    optgroup: "group", option: "option", output: "status", p: "paragraph", progress: "progressbar",
    search: "search", table: "table", tbody: "rowgroup", td: "cell", textarea: "textbox",
    tfoot: "rowgroup", thead: "rowgroup", tr: "row", ul: "list",
  };
  // Where a <header>/<footer> is no banner/contentinfo (scoped to a sectioning element).
  const SECTIONING = { article: 1, aside: 1, main: 1, nav: 1, section: 1 };

  let count = 0;
  let truncated = false;
  const kept = keep ? [] : null;
  const frameIds = globalThis.__argentFrameIds;
  const frameEls = frameIds ? [] : null;
  // Scroll offsets of every scrollable element walked: part of what makes two reads one screen,
  // so a scroll through blank space still counts as movement.
  const scrollMarks = [];
  // What the walk saw, for the diagnosis of a screen that shows nothing.
  let shown = 0; // nodes with something to name and a visible frame
  let named = 0; // nodes with something to name
  let bare = 0; // visible nodes with nothing to name them by (a <canvas>, an empty <div>)
  const bareTags = [];
  const pruned = { display: 0, opacity: 0, visibility: 0 };

  // The elements each queried CSS selector matches, gathered per document and shadow root.
  const cssSets = [];
  for (let i = 0; i < cssList.length; i++) cssSets.push(new Set());
  let cssError = null;
  const cssScan = function (root, isDocument) {
    const all = isDocument ? docQuery : fragQuery;
    for (let i = 0; i < cssList.length; i++) {
      let found = null;
      try {
        found = apply(all, root, [cssList[i]]);
      } catch (e) {
        if (!cssError) cssError = { selector: cssList[i], message: String((e && e.message) || e) };
        continue;
      }
      for (let j = 0; j < found.length; j++) cssSets[i].add(found[j]);
    }
  };

  // The path from the root to the element being walked, one entry per depth: its style, the clip
  // its in-flow children get (and where that clip was made), whether it contains absolutely
  // positioned descendants (positioned, or a document's root), whether it contains fixed ones too
  // (transformed or contained: computed when first asked), whether it is a document's root.
  const pathStyle = [];
  const pathClip = [];
  const pathFrom = [];
  const pathPositioned = [];
  const pathContains = [];
  const pathRoot = [];
  const pathTag = [];

  const collapse = function (s, max) {
    if (!s) return "";
    s = String(s).replace(/\s+/g, " ").trim();
    const cap = max || MAX_TEXT;
    return s.length > cap ? s.slice(0, cap) : s;
  };
  const NON_SPACE = /\S/;
  const attr = function (el, name) {
    const v = apply(getAttribute, el, [name]);
    return v === null ? "" : v;
  };
  const clamp01 = function (v) {
    return v < 0 ? 0 : v > 1 ? 1 : v;
  };
  const round = function (v) {
    return Math.round(v * 100000) / 100000;
  };
  const intersect = function (a, b) {
    return [Math.max(a[0], b[0]), Math.max(a[1], b[1]), Math.min(a[2], b[2]), Math.min(a[3], b[3])];
  };
  const normalize = function (box) {
    // box: [left, top, right, bottom] in top-viewport CSS px -> [x, y, w, h] fractions
    const x0 = clamp01(box[0] / W);
    const y0 = clamp01(box[1] / H);
    const x1 = clamp01(box[2] / W);
    const y1 = clamp01(box[3] / H);
    return [round(x0), round(y0), round(Math.max(0, x1 - x0)), round(Math.max(0, y1 - y0))];
  };
  const union = function (frames) {
    let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (let i = 0; i < frames.length; i++) {
      const f = frames[i];
      if (!(f[2] > 0 && f[3] > 0)) continue;
      x0 = Math.min(x0, f[0]);
      y0 = Math.min(y0, f[1]);
      x1 = Math.max(x1, f[0] + f[2]);
      y1 = Math.max(y1, f[1] + f[3]);
    }
    if (x0 === Infinity) return [0, 0, 0, 0];
    return [round(x0), round(y0), round(x1 - x0), round(y1 - y0)];
  };
  const clipsOverflow = function (cs) {
    return cs.overflowX !== "visible" || cs.overflowY !== "visible";
  };
  // Whether an element contains fixed descendants (and absolutely positioned ones) by its style.
  const containsFixed = function (cs) {
    return (
      cs.transform !== "none" ||
      cs.perspective !== "none" ||
      cs.filter !== "none" ||
      (cs.backdropFilter !== undefined && cs.backdropFilter !== "none") ||
      (cs.contain !== "none" && /paint|layout|strict|content/.test(cs.contain)) ||
      (cs.willChange !== "auto" && /transform|perspective|filter/.test(cs.willChange)) ||
      (cs.containerType !== undefined && cs.containerType !== "normal")
    );
  };
  // The depth whose in-flow clip an absolutely positioned (or, `fixed`, a fixed) element at
  // `depth` gets: its containing block's. -1 when it is the in-flow clip (nothing clips between).
  const containerDepth = function (depth, fixed) {
    const p = depth - 1;
    if (p < 0 || pathRoot[pathFrom[p]]) return -1;
    for (let i = p; i >= 0; i--) {
      if (pathRoot[i] || (!fixed && pathPositioned[i])) return i;
      let c = pathContains[i];
      if (c === undefined) c = pathContains[i] = containsFixed(pathStyle[i]);
      if (c) return i;
    }
    return -1;
  };
  // The box `clip: rect(...)` (absolutely positioned elements) or `clip-path` leaves of `r`, or null.
  const px = function (v, whole) {
    if (v === "auto" || v === "") return null;
    const n = parseFloat(v);
    if (!isFinite(n)) return null;
    return /%$/.test(v) ? (n / 100) * whole : n;
  };
  const shapeClip = function (cs, position, r, ox, oy) {
    const L = r.left + ox, T = r.top + oy, w = r.width, h = r.height;
    let out = null;
    if ((position === "absolute" || position === "fixed") && cs.clip && cs.clip !== "auto") {
      const m = /rect\(([^)]*)\)/.exec(cs.clip);
      if (m) {
        const v = m[1].split(/[\s,]+/);
        const top = px(v[0], h), right = px(v[1], w), bottom = px(v[2], h), left = px(v[3], w);
        out = [
          L + (left === null ? 0 : left), T + (top === null ? 0 : top),
          L + (right === null ? w : right), T + (bottom === null ? h : bottom),
        ];
      }
    }
    const cp = cs.clipPath;
    if (cp && cp !== "none") {
      let m = /^inset\(([^)]*)\)/.exec(cp);
      let shape = null;
      if (m) {
        const v = m[1].split(/\s+round\s+/)[0].trim().split(/\s+/);
        const t = px(v[0], h) || 0;
        const rr = px(v.length > 1 ? v[1] : v[0], w) || 0;
        const b = px(v.length > 2 ? v[2] : v[0], h) || 0;
        const l = px(v.length > 3 ? v[3] : v.length > 1 ? v[1] : v[0], w) || 0;
        shape = [L + l, T + t, L + w - rr, T + h - b];
      } else if ((m = /^circle\(\s*([-\d.]+)(px|%)?/.exec(cp)) && parseFloat(m[1]) === 0) {
        shape = [L, T, L, T];
      } else if ((m = /^ellipse\(\s*([-\d.]+)(px|%)?\s+([-\d.]+)/.exec(cp)) && (parseFloat(m[1]) === 0 || parseFloat(m[3]) === 0)) {
        shape = [L, T, L, T];
      }
      if (shape) out = out ? intersect(out, shape) : shape;
    }
    return out;
  };

  // The focused element: follow activeElement through shadow roots and same-origin iframes.
  let focusedEl = null;
  (function () {
    let el = read(docActive, document);
    for (let hops = 0; el && hops < 64; hops++) {
      const tag = read(localNameOf, el);
      if (tag === "iframe" || tag === "frame") {
        let doc = null;
        try { doc = tag === "iframe" ? read(iframeDocument, el) : null; } catch (e) { doc = null; }
        if (!doc) break;
        el = read(docActive, doc);
        continue;
      }
      const sr = read(shadowRootOf, el);
      const inner = sr ? read(shadowActive, sr) : null;
      if (inner) { el = inner; continue; }
      if (tag !== "body" && tag !== "html") focusedEl = el;
      break;
    }
  })();

  // An iframe the walk cannot enter, marked for the device to walk (see the header).
  const frameMark = function (el, cs, box, clip, depth) {
    let doc = null;
    try { doc = read(iframeDocument, el); } catch (e) { doc = null; }
    if (doc && read(documentElementOf, doc)) return null;
    if (depth + 1 > maxDepth) {
      truncated = true;
      return null;
    }
    const ix = box[0] + (parseFloat(cs.borderLeftWidth) || 0) + (parseFloat(cs.paddingLeft) || 0);
    const iy = box[1] + (parseFloat(cs.borderTopWidth) || 0) + (parseFloat(cs.paddingTop) || 0);
    const inner = [ix, iy, ix + (read(clientWidthOf, el) || 0), iy + (read(clientHeightOf, el) || 0)];
    const sub = { at: [ix, iy], clip: intersect(intersect(clip, box), inner), key: frameEls.push(el) - 1 };
    const id = frameIds.get(el);
    if (typeof id === "string") sub.id = id;
    return sub;
  };

  const textExtent = function (el, ox, oy) {
    try {
      const range = apply(createRange, document, []);
      range.selectNodeContents(el);
      const r = range.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) return [r.left + ox, r.top + oy, r.right + ox, r.bottom + oy];
    } catch (e) { /* no extent */ }
    return null;
  };
  // The text of a labelling element (a <label>, an aria-labelledby target, a <legend>): its text
  // nodes and the values of the fields in it, `skip` (the labelled field itself) left out; at most
  // LABEL_NODES nodes visited.
  const textIn = function (root, skip) {
    let out = "";
    let budget = LABEL_NODES;
    const visit = function (node) {
      if (budget-- <= 0 || out.length > TEXT_CAP) return;
      const type = read(nodeTypeOf, node);
      if (type === 3) {
        out += read(dataOf, node);
        return;
      }
      if (type !== 1 || node === skip) return;
      const tag = read(localNameOf, node);
      if (SKIP[tag]) return;
      const label = attr(node, "aria-label");
      if (label) { out += " " + label + " "; return; }
      if (tag === "input") {
        const kind = String(read(inputType, node) || "text");
        if (!NO_VALUE_INPUTS[kind]) out += " " + read(inputValue, node) + " ";
        return;
      }
      if (tag === "select") {
        const chosen = read(selectedOptionsOf, node);
        if (chosen && chosen.length) out += " " + read(textContentOf, chosen[0]) + " ";
        return;
      }
      if (tag === "img") { out += " " + attr(node, "alt") + " "; return; }
      const kids = read(childNodesOf, node);
      for (let i = 0; kids && i < kids.length; i++) visit(kids[i]);
      if (tag !== "span" && tag !== "b" && tag !== "i" && tag !== "em" && tag !== "strong") out += " ";
    };
    visit(root);
    return collapse(out);
  };
  const textOfIds = function (el, ids) {
    const root = apply(getRootNode, el, []);
    const byId = read(nodeTypeOf, root) === 9 ? docById : fragById;
    const parts = [];
    const list = ids.split(/\s+/);
    for (let i = 0; i < list.length && i < 16; i++) {
      if (!list[i]) continue;
      let target = null;
      try { target = apply(byId, root, [list[i]]); } catch (e) { target = null; }
      if (target) parts.push(textIn(target, null));
    }
    return collapse(parts.join(" "));
  };
  const labelsText = function (el) {
    let labels = null;
    try { labels = el.labels; } catch (e) { labels = null; }
    if (!labels || typeof labels.length !== "number") return "";
    const parts = [];
    for (let i = 0; i < labels.length && i < 4; i++) parts.push(textIn(labels[i], el));
    return collapse(parts.join(" "));
  };
  // The text of the first child element with this tag (a fieldset's legend, a figure's caption).
  const childText = function (el, tag) {
    const kids = read(elChildren, el);
    for (let i = 0; kids && i < kids.length && i < 64; i++) {
      if (read(localNameOf, kids[i]) === tag) return textIn(kids[i], null);
    }
    return "";
  };

  // The implicit ARIA role (HTML-AAM) of an element that declares none.
  const implicitRole = function (el, tag, type, depth) {
    const fixed = TAG_ROLES[tag];
    if (fixed) return fixed;
    switch (tag) {
      case "a":
      case "area":
        return apply(hasAttribute, el, ["href"]) ? "link" : "";
      case "input": {
        if (BUTTON_INPUTS[type]) return "button";
        if (type === "checkbox" || type === "radio") return type;
        if (type === "range") return "slider";
        if (type === "number") return "spinbutton";
        if (type === "hidden" || type === "color" || type === "file") return type === "file" ? "button" : "";
        const list = apply(hasAttribute, el, ["list"]);
        if (type === "search") return list ? "combobox" : "searchbox";
        return list ? "combobox" : "textbox";
      }
      case "select": {
        const size = read(selectSize, el);
        return read(selectMultiple, el) || size > 1 ? "listbox" : "combobox";
      }
      case "img":
        return apply(hasAttribute, el, ["alt"]) && attr(el, "alt") === "" ? "" : "img";
      case "th":
        return attr(el, "scope").toLowerCase() === "row" ? "rowheader" : "columnheader";
      case "section":
        return attr(el, "aria-label").trim() || attr(el, "aria-labelledby").trim() || attr(el, "title").trim()
          ? "region" : "";
      case "form":
        return attr(el, "aria-label").trim() || attr(el, "aria-labelledby").trim() || attr(el, "title").trim()
          ? "form" : "";
      case "header":
      case "footer": {
        for (let i = depth - 1; i >= 0 && !pathRoot[i]; i--) {
          if (SECTIONING[pathTag[i]]) return "";
        }
        return tag === "header" ? "banner" : "contentinfo";
      }
      default:
        return apply(hasAttribute, el, ["contenteditable"]) && attr(el, "contenteditable").toLowerCase() !== "false"
          ? "textbox"
          : "";
    }
  };

  // The accessible name (accname): [name, where it came from].
  const FROM_NAME = 0; // aria-labelledby, aria-label, the element's own (a label, alt, a legend)
  const FROM_CONTENT = 1;
  const FROM_TOOLTIP = 2; // title, placeholder
  const NO_NAME = ["", FROM_TOOLTIP];
  const nameOf = function (el, tag, role, type, content, clickable) {
    const ids = attr(el, "aria-labelledby");
    if (ids) {
      const t = textOfIds(el, ids);
      if (t) return [t, FROM_NAME];
    }
    const label = collapse(attr(el, "aria-label"));
    if (label) return [label, FROM_NAME];
    let native = "";
    if (tag === "input") {
      if (BUTTON_INPUTS[type]) {
        if (type === "image") native = collapse(attr(el, "alt"));
        if (!native && apply(hasAttribute, el, ["value"])) native = collapse(read(inputValue, el));
        if (!native && (type === "submit" || type === "image")) native = "Submit";
        if (!native && type === "reset") native = "Reset";
      } else {
        native = labelsText(el);
      }
    } else if (tag === "textarea" || tag === "select" || tag === "meter" || tag === "progress" || tag === "output") {
      native = labelsText(el);
    } else if (tag === "img" || tag === "area") {
      native = collapse(attr(el, "alt"));
    } else if (tag === "fieldset") {
      native = childText(el, "legend");
    } else if (tag === "figure") {
      native = childText(el, "figcaption");
    } else if (tag === "table") {
      native = childText(el, "caption");
    } else if (tag === "svg") {
      native = childText(el, "title");
    }
    if (native) return [native, FROM_NAME];
    if (CONTENT_ROLES[role] === 1 || (clickable && CONTENT_TAGS[tag] === 1)) {
      const t = collapse(content);
      if (t) return [t, FROM_CONTENT];
    }
    const title = collapse(attr(el, "title"));
    if (title) return [title, FROM_TOOLTIP];
    if (tag === "input" || tag === "textarea") return [collapse(attr(el, "placeholder")), FROM_TOOLTIP];
    if (role === "textbox" || role === "searchbox" || role === "combobox") {
      return [collapse(attr(el, "aria-placeholder")), FROM_TOOLTIP];
    }
    return NO_NAME;
  };

  // What a walked element gives the text of its parent (its name where that is not its contents,
  // else its contents), and whether it stands apart from its neighbours (a block, not inline).
  let lastText = "";
  let lastBlock = false;

  const walk = function (el, depth, ox, oy, clip, hard, parentPointer) {
    lastText = "";
    lastBlock = false;
    const tag = read(localNameOf, el);
    if (!tag || SKIP[tag]) return null;
    const cs = apply(computedStyle, window, [el]);
    const display = cs.display;
    if (display === "none") {
      pruned.display++;
      return null;
    }
    if (cs.opacity === "0" && display !== "contents") {
      pruned.opacity++;
      return null;
    }
    const hidden = cs.visibility === "hidden" || cs.visibility === "collapse";
    if (hidden) pruned.visibility++;
    const position = cs.position;
    const owner = read(ownerDocumentOf, el);
    const isRoot = depth === 0 || (tag === "html" && owner !== null && read(documentElementOf, owner) === el);
    if (isRoot && depth > 0 && cssList.length) cssScan(owner, true);

    // The clip this element gets: its containing block's, for an absolutely positioned or fixed one.
    let ownClip = clip;
    let ownFrom = depth > 0 ? pathFrom[depth - 1] : 0;
    if (!isRoot && (position === "absolute" || position === "fixed")) {
      const at = containerDepth(depth, position === "fixed");
      if (at >= 0) {
        ownClip = pathClip[at];
        ownFrom = pathFrom[at];
      }
    }
    let box = null;
    let at = null; // where a zero-area box sits
    let r = null;
    if (display !== "contents") {
      r = apply(boundingRect, el, []);
      if (r.width > 0 && r.height > 0) box = [r.left + ox, r.top + oy, r.right + ox, r.bottom + oy];
      else at = [r.left + ox, r.top + oy, r.left + ox, r.top + oy];
      const shape = shapeClip(cs, position, r, ox, oy);
      if (shape) hard = hard ? intersect(hard, shape) : shape;
    }
    if (!hidden) {
      if (count >= maxNodes) {
        truncated = true;
        return null;
      }
      count++;
    }
    const pointer = cs.cursor === "pointer";

    // What this element's in-flow children get: its own overflow clip (never <html>'s; <body>'s
    // only when <html> keeps its own overflow), made at this depth.
    let childClip = ownClip;
    let childFrom = ownFrom;
    if (r && !isRoot && display !== "inline" && clipsOverflow(cs)) {
      const propagated = tag === "body" && depth > 0 && pathRoot[depth - 1] && !clipsOverflow(pathStyle[depth - 1]);
      if (!propagated) {
        childClip = intersect(ownClip, [r.left + ox, r.top + oy, r.right + ox, r.bottom + oy]);
        childFrom = depth;
      }
    }
    pathStyle[depth] = cs;
    pathClip[depth] = childClip;
    pathFrom[depth] = isRoot ? depth : childFrom;
    pathPositioned[depth] = isRoot || position !== "static";
    pathContains[depth] = isRoot ? true : undefined;
    pathRoot[depth] = isRoot;
    pathTag[depth] = tag;

    // Children (not below a field: its value says what it holds), and the text they give.
    const kids = [];
    let own = "";
    let content = "";
    let gave = false; // a child element gave text to `content`
    let interleaved = false; // `content` is not the own text followed by the children's (`text`)
    if (tag === "iframe" && box) {
      let doc = null;
      try { doc = read(iframeDocument, el); } catch (e) { doc = null; }
      const root = doc ? read(documentElementOf, doc) : null;
      if (root) {
        if (depth + 1 > maxDepth) {
          truncated = true;
        } else {
          const ix = box[0] + (parseFloat(cs.borderLeftWidth) || 0) + (parseFloat(cs.paddingLeft) || 0);
          const iy = box[1] + (parseFloat(cs.borderTopWidth) || 0) + (parseFloat(cs.paddingTop) || 0);
          const inner = [ix, iy, ix + (read(clientWidthOf, el) || 0), iy + (read(clientHeightOf, el) || 0)];
          const frameClip = intersect(intersect(ownClip, box), inner);
          const n = walk(root, depth + 1, ix, iy, frameClip, hard, false);
          if (n) kids.push(n);
        }
      }
    } else if (LEAF_TAGS[tag] !== 1) {
      let list = null;
      const sr = read(shadowRootOf, el);
      if (sr) {
        if (cssList.length) cssScan(sr, false);
        list = read(childNodesOf, sr);
      } else {
        if (tag === "slot") {
          const assigned = apply(assignedNodes, el, [{ flatten: true }]);
          if (assigned && assigned.length) list = assigned;
        }
        if (!list) list = read(childNodesOf, el);
      }
      if (list && list.length) {
        if (depth + 1 > maxDepth) {
          truncated = true;
        } else {
          for (let i = 0; i < list.length; i++) {
            const child = list[i];
            const type = read(nodeTypeOf, child);
            if (type === 3) {
              if (!hidden && (content.length < TEXT_CAP || own.length < TEXT_CAP)) {
                let d = read(dataOf, child);
                if (d.length > TEXT_CAP) d = d.slice(0, TEXT_CAP);
                if (gave && !interleaved && NON_SPACE.test(d)) interleaved = true;
                if (content.length < TEXT_CAP) content += d;
                if (own.length < TEXT_CAP) own += " " + d;
              }
              continue;
            }
            if (type !== 1) continue;
            if (count >= maxNodes) {
              truncated = true;
              break;
            }
            const n = walk(child, depth + 1, ox, oy, childClip, hard, pointer);
            if (n) kids.push(n);
            if (lastText && content.length < TEXT_CAP) {
              content += lastBlock ? " " + lastText + " " : lastText;
              gave = true;
            }
          }
        }
      }
    }

    // Own information (none for visibility:hidden).
    const node = {};
    if (kept) node.ref = kept.push(el) - 1;
    const sub = frameEls && tag === "iframe" && box && !hidden ? frameMark(el, cs, box, ownClip, depth) : null;
    if (sub) node.sub = sub;
    let info = false;
    let give = content; // what this element gives its parent's text
    if (!hidden) {
      const declared = collapse(attr(el, "role")).toLowerCase().split(" ")[0];
      const type = tag === "input" ? String(read(inputType, el) || "text").toLowerCase() : "";
      // `none` / `presentation` take the element's role away (its kind keeps the word).
      const role =
        declared === "none" || declared === "presentation"
          ? ""
          : declared || (isRoot ? "" : implicitRole(el, tag, type, depth));
      if (role) node.role = role;
      if ((declared || tag) !== role) node.kind = declared || tag;
      const identifier = attr(el, "id") || attr(el, "data-testid") || attr(el, "data-test-id");
      const clickable =
        (tag === "a" && apply(hasAttribute, el, ["href"])) ||
        (tag === "input" && type !== "hidden") ||
        CLICKABLE_TAGS[tag] === 1 ||
        apply(hasAttribute, el, ["onclick"]) ||
        CLICKABLE_ROLES[role] === 1 ||
        (apply(hasAttribute, el, ["tabindex"]) && attr(el, "tabindex").trim() !== "-1") ||
        (pointer && !parentPointer);
      let value;
      if (tag === "input") value = NO_VALUE_INPUTS[type] ? "" : collapse(read(inputValue, el));
      else if (tag === "textarea") value = collapse(read(textareaValue, el));
      else if (tag === "select") {
        const chosen = read(selectedOptionsOf, el);
        value = chosen && chosen.length ? collapse(read(textContentOf, chosen[0])) : "";
      } else value = collapse(own);
      const name = isRoot ? NO_NAME : nameOf(el, tag, role, type, content, clickable);
      const label = name[0];
      if (LEAF_TAGS[tag] === 1 && !BUTTON_INPUTS[type]) give = name[1] === FROM_NAME && label ? label : value;
      else if (label && (name[1] === FROM_NAME || (name[1] === FROM_TOOLTIP && !collapse(content)))) give = label;
      const shownValue = value && value === label ? "" : value;
      // The description: a placeholder or title that does not name it (a selector's text matches it too).
      let desc = "";
      if (!isRoot) {
        if (tag === "input" || tag === "textarea") desc = collapse(attr(el, "placeholder"));
        if (!desc || desc === label) desc = collapse(attr(el, "title"));
        if (desc === label || desc === shownValue) desc = "";
      }
      let checked = null;
      if (tag === "input" && (type === "checkbox" || type === "radio")) checked = !!read(inputChecked, el);
      else {
        const aria = attr(el, "aria-checked");
        if (aria === "true" || aria === "mixed") checked = true;
        else if (aria === "false") checked = false;
      }
      let disabled = false;
      try { disabled = apply(matches, el, [":disabled"]); } catch (e) { disabled = false; }
      if (attr(el, "aria-disabled") === "true") disabled = true;
      let scrollable = false;
      const sw = read(scrollWidthOf, el), cw = read(clientWidthOf, el);
      const sh = read(scrollHeightOf, el), ch = read(clientHeightOf, el);
      if (owner && read(scrollingElementOf, owner) === el) {
        scrollable = cs.overflowY !== "hidden" && (sh > ch + 1 || sw > cw + 1);
      } else if (box) {
        const yScroll = cs.overflowY === "auto" || cs.overflowY === "scroll";
        const xScroll = cs.overflowX === "auto" || cs.overflowX === "scroll";
        scrollable = (yScroll && sh > ch + 1) || (xScroll && sw > cw + 1);
      }
      let css = null;
      for (let i = 0; i < cssSets.length; i++) {
        if (cssSets[i].has(el)) (css || (css = [])).push(i);
      }
      if (label) node.label = label;
      if (shownValue) node.value = shownValue;
      if (interleaved) {
        const reading = collapse(content, TEXT_CAP);
        if (reading && reading !== label) node.text = reading;
      }
      if (desc) node.desc = desc;
      if (identifier) node.identifier = collapse(identifier);
      if (clickable) node.clickable = true;
      if (disabled) node.disabled = true;
      if (checked !== null) node.checked = checked;
      if (type === "password") node.password = true;
      if (scrollable) {
        node.scrollable = true;
        try { scrollMarks.push(Math.round(el.scrollTop) + "," + Math.round(el.scrollLeft)); } catch (e) { /* clobbered */ }
      }
      if (el === focusedEl) node.focused = true;
      if (css) node.css = css;
      info = !!(
        role || label || shownValue || identifier || clickable || scrollable || checked !== null || node.focused || css
      );
    }

    // The frame: the own box clipped by what clips it, else the extent of the contents.
    if (box) {
      let visibleBox = intersect(box, ownClip);
      if (hard) visibleBox = intersect(visibleBox, hard);
      node.frame =
        visibleBox[2] > visibleBox[0] && visibleBox[3] > visibleBox[1]
          ? normalize(visibleBox)
          : normalize([visibleBox[0], visibleBox[1], visibleBox[0], visibleBox[1]]);
    } else {
      const frames = [];
      for (let i = 0; i < kids.length; i++) frames.push(kids[i].frame);
      let f = union(frames);
      if (!(f[2] > 0) && node.value) {
        const t = textExtent(el, ox, oy);
        if (t) {
          let v = intersect(t, ownClip);
          if (hard) v = intersect(v, hard);
          f = normalize(v);
        }
      }
      if (!(f[2] > 0) && at) f = normalize(at);
      node.frame = f;
    }
    if (depth > 0 && !hidden) {
      const seen = node.frame[2] > 0 && node.frame[3] > 0;
      if (info) {
        named++;
        if (seen) shown++;
      } else if (seen && kids.length === 0) {
        bare++;
        if (bareTags.length < 3 && bareTags.indexOf(tag) < 0) bareTags.push(tag);
      }
    }

    lastText = give.length > TEXT_CAP ? give.slice(0, TEXT_CAP) : give;
    lastBlock = !(display.lastIndexOf("inline", 0) === 0 || display === "contents");
    if (depth > 0) {
      if (!info) {
        if (kids.length === 0 && (!box || hidden)) return null;
        // Wrappers that say nothing give way to their only child.
        if (kids.length === 1 && (hidden || tag === "div" || (!box && tag === "span"))) return kids[0];
      }
    }
    if (hidden) node.kind = tag;
    if (kids.length) node.children = kids;
    return node;
  };

  // Why a screen shows nothing a person could name (only asked when that is so).
  const diagnose = function () {
    const body = read(bodyOf, document);
    const state = read(readyStateOf, document);
    const loading = state === "loading" ? "; the document is still loading" : "";
    if (!body) return "the page is blank (the document has no <body>" + loading + ")";
    if (read(elChildren, body).length === 0 && !collapse(read(textContentOf, body))) {
      return "the page is blank (its <body> is empty" + loading + ")";
    }
    const roots = [[read(documentElementOf, document), "<html>"], [body, "<body>"]];
    for (let i = 0; i < roots.length; i++) {
      const cs = apply(computedStyle, window, [roots[i][0]]);
      if (cs.display === "none") return "every element is hidden by display: none on " + roots[i][1];
      if (cs.opacity === "0") return "every element is hidden by opacity: 0 on " + roots[i][1];
      if (cs.visibility === "hidden") return "every element is hidden by visibility: hidden on " + roots[i][1];
    }
    if (bare > 0) {
      return (
        "no visible element has text, a role or a name to select it by (" + bare + " visible element" +
        (bare === 1 ? " has" : "s have") + " none: <" + bareTags.join(">, <") + ">)"
      );
    }
    if (named > 0) {
      return (
        "the document has no visible element (" + named + (named === 1 ? " element has" : " elements have") +
        " text, a role or a name, but none has a box on the screen: each has no size, lies outside the " +
        "viewport or is clipped away)"
      );
    }
    const parts = [];
    if (pruned.display) parts.push(pruned.display + " by display: none");
    if (pruned.opacity) parts.push(pruned.opacity + " by opacity: 0");
    if (pruned.visibility) parts.push(pruned.visibility + " by visibility: hidden");
    if (parts.length) return "every element is hidden (" + parts.join(", ") + ")";
    return "the document has no visible element (nothing on it has text, a role or a name)";
  };

  const rootEl = read(documentElementOf, document);
  if (!rootEl) return { tree: null, error: "the document has no root element", w: W, h: H };
  if (cssList.length) {
    cssScan(document, true);
    if (cssError) return { tree: null, cssError: cssError, w: W, h: H };
  }
  const view = [0, 0, W, H];
  const tree = walk(rootEl, 0, 0, 0, view, null, false);
  if (cssError) return { tree: null, cssError: cssError, w: W, h: H };
  if (!tree) return { tree: null, error: "the root element is hidden", w: W, h: H };
  tree.frame = [0, 0, 1, 1];
  if (kept) globalThis.__argentRefs = kept;
  if (frameEls) globalThis.__argentFrameEls = frameEls;
  const out = { tree: tree, truncated: truncated, scroll: scrollMarks.join(";"), w: W, h: H };
  if (shown === 0) out.blank = diagnose();
  return out;
})
