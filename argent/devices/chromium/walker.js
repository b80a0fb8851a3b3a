// The page-side UI-tree walker of argent's chromium device.
//
// Evaluated as `(<this function>)(maxDepth, maxNodes, keep)` in one Runtime.evaluate (returnByValue).
// It walks the composed tree from document.documentElement — element children, open shadow
// roots (through their slots), same-origin iframe documents — and returns
//   { tree: <node>, truncated: <bool>, scroll: <offsets of scrollable elements>, w: innerWidth, h: innerHeight }
// where a node is { role, frame: [x, y, w, h] (fractions of the viewport, clamped to [0, 1]),
// label?, value?, identifier?, clickable?, disabled?, checked?, password?, scrollable?,
// focused?, children? } with falsy fields left out. With `keep` (only in argent's isolated world,
// where the page cannot see it), each node also carries `ref`, its element's index in
// `globalThis.__argentRefs`, so a later call can act on the very element (scroll it into view).
//
// DOM reads go through getters captured from the prototypes up front, so a page that shadows
// a property (a <form> with a control named "children" or "id") cannot derail the walk.
(function (maxDepth, maxNodes, keep) {
  "use strict";
  const W = window.innerWidth;
  const H = window.innerHeight;
  if (!(W > 0 && H > 0)) {
    return { tree: null, error: "viewport is zero (w=" + W + ", h=" + H + ")", w: W, h: H };
  }
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
  const fragmentChildren = getter(DocumentFragment.prototype, "children");
  const docActive = getter(Document.prototype, "activeElement");
  const shadowActive = getter(ShadowRoot.prototype, "activeElement");
  const docById = Document.prototype.getElementById;
  const fragById = DocumentFragment.prototype.getElementById;
  const scrollingElementOf = getter(Document.prototype, "scrollingElement");
  const documentElementOf = getter(Document.prototype, "documentElement");
  const innerTextOf = getter(HTMLElement.prototype, "innerText");
  const inputValue = getter(HTMLInputElement.prototype, "value");
  const inputType = getter(HTMLInputElement.prototype, "type");
  const inputChecked = getter(HTMLInputElement.prototype, "checked");
  const textareaValue = getter(HTMLTextAreaElement.prototype, "value");
  const selectedOptionsOf = getter(HTMLSelectElement.prototype, "selectedOptions");
  const iframeDocument = getter(HTMLIFrameElement.prototype, "contentDocument");
  const assignedElements = HTMLSlotElement.prototype.assignedElements;
  const computedStyle = window.getComputedStyle;
  const createRange = Document.prototype.createRange;

  const SKIP = { head: 1, script: 1, style: 1, template: 1, noscript: 1, meta: 1, link: 1, title: 1, base: 1 };
  const CLICKABLE_TAGS = { button: 1, select: 1, textarea: 1, summary: 1 };
  const CLICKABLE_ROLES = {
    button: 1, link: 1, tab: 1, menuitem: 1, menuitemcheckbox: 1, menuitemradio: 1,
    checkbox: 1, radio: 1, switch: 1, option: 1,
  };
  const NAME_FROM_CONTENT = { button: 1, a: 1, summary: 1, option: 1, label: 1 };
  const NO_VALUE_INPUTS = { password: 1, checkbox: 1, radio: 1, file: 1, hidden: 1, image: 1 };
  const MAX_TEXT = 200;

  let count = 0;
  let truncated = false;
  const kept = keep ? [] : null;
  // Scroll offsets of every scrollable element walked: part of what makes two reads one screen,
  // so a scroll through blank space still counts as movement.
  const scrollMarks = [];

  const collapse = function (s) {
    if (!s) return "";
    s = String(s).replace(/\s+/g, " ").trim();
    return s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) : s;
  };
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

  const ownText = function (el) {
    const nodes = read(childNodesOf, el);
    let out = "";
    for (let i = 0; nodes && i < nodes.length; i++) {
      const n = nodes[i];
      if (read(nodeTypeOf, n) === 3) out += " " + read(dataOf, n);
      if (out.length > MAX_TEXT * 4) break;
    }
    return collapse(out);
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
  const textOfIds = function (el, ids) {
    const root = apply(getRootNode, el, []);
    const byId = read(nodeTypeOf, root) === 9 ? docById : fragById;
    const parts = [];
    const list = ids.split(/\s+/);
    for (let i = 0; i < list.length; i++) {
      if (!list[i]) continue;
      let target = null;
      try { target = apply(byId, root, [list[i]]); } catch (e) { target = null; }
      if (target) parts.push(read(textContentOf, target));
    }
    return collapse(parts.join(" "));
  };
  const labelsText = function (el) {
    let labels = null;
    try { labels = el.labels; } catch (e) { labels = null; }
    if (!labels || typeof labels.length !== "number") return "";
    const parts = [];
    for (let i = 0; i < labels.length && i < 4; i++) parts.push(read(textContentOf, labels[i]));
    return collapse(parts.join(" "));
  };

  const composedChildren = function (el, tag) {
    const sr = read(shadowRootOf, el);
    if (sr) return read(fragmentChildren, sr);
    if (tag === "slot") {
      const assigned = apply(assignedElements, el, [{ flatten: true }]);
      if (assigned && assigned.length) return assigned;
    }
    return read(elChildren, el);
  };

  const walk = function (el, depth, ox, oy, clip, viewClip, parentPointer) {
    const tag = read(localNameOf, el);
    if (!tag || SKIP[tag]) return null;
    const cs = apply(computedStyle, window, [el]);
    const display = cs.display;
    if (display === "none") return null;
    if (cs.opacity === "0" && display !== "contents") return null;
    const hidden = cs.visibility === "hidden" || cs.visibility === "collapse";
    const ownClip = cs.position === "fixed" ? viewClip : clip;
    let box = null;
    let at = null; // where a zero-area box sits
    if (display !== "contents") {
      const r = apply(boundingRect, el, []);
      if (r.width > 0 && r.height > 0) box = [r.left + ox, r.top + oy, r.right + ox, r.bottom + oy];
      else if (clipsOverflow(cs)) return null;
      else at = [r.left + ox, r.top + oy, r.left + ox, r.top + oy];
    }
    if (!hidden) {
      if (count >= maxNodes) {
        truncated = true;
        return null;
      }
      count++;
    }
    const pointer = cs.cursor === "pointer";

    // Children (not below <select>: its value is the chosen option).
    const kids = [];
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
          const n = walk(root, depth + 1, ix, iy, frameClip, frameClip, false);
          if (n) kids.push(n);
        }
      }
    } else if (tag !== "select") {
      const list = composedChildren(el, tag);
      if (list && list.length) {
        if (depth + 1 > maxDepth) {
          truncated = true;
        } else {
          const childClip = box && clipsOverflow(cs) ? intersect(ownClip, box) : ownClip;
          for (let i = 0; i < list.length; i++) {
            if (count >= maxNodes) {
              truncated = true;
              break;
            }
            const n = walk(list[i], depth + 1, ox, oy, childClip, viewClip, pointer);
            if (n) kids.push(n);
          }
        }
      }
    }

    // Own information (none for visibility:hidden).
    const node = { role: "" };
    if (kept) node.ref = kept.push(el) - 1;
    let info = false;
    if (!hidden) {
      const role = collapse(attr(el, "role")).toLowerCase().split(" ")[0];
      node.role = role || tag;
      const identifier = attr(el, "id") || attr(el, "data-testid") || attr(el, "data-test-id");
      const type = tag === "input" ? String(read(inputType, el) || "text") : "";
      let label = collapse(attr(el, "aria-label"));
      if (!label) {
        const ids = attr(el, "aria-labelledby");
        if (ids) label = textOfIds(el, ids);
      }
      if (!label && (tag === "input" || tag === "textarea")) label = collapse(attr(el, "placeholder"));
      if (!label && (tag === "input" || tag === "textarea" || tag === "select")) label = labelsText(el);
      if (!label && tag === "img") label = collapse(attr(el, "alt"));
      if (!label) label = collapse(attr(el, "title"));
      let value;
      if (tag === "input") value = NO_VALUE_INPUTS[type] ? "" : collapse(read(inputValue, el));
      else if (tag === "textarea") value = collapse(read(textareaValue, el));
      else if (tag === "select") {
        const chosen = read(selectedOptionsOf, el);
        value = chosen && chosen.length ? collapse(read(textContentOf, chosen[0])) : "";
      } else value = ownText(el);
      const clickable =
        (tag === "a" && apply(hasAttribute, el, ["href"])) ||
        (tag === "input" && type !== "hidden") ||
        CLICKABLE_TAGS[tag] === 1 ||
        apply(hasAttribute, el, ["onclick"]) ||
        CLICKABLE_ROLES[role] === 1 ||
        (apply(hasAttribute, el, ["tabindex"]) && attr(el, "tabindex").trim() !== "-1") ||
        (pointer && !parentPointer);
      if (!label && clickable && (NAME_FROM_CONTENT[tag] === 1 || CLICKABLE_ROLES[role] === 1)) {
        label = collapse(read(innerTextOf, el));
      }
      if (value && value === label) value = "";
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
      const owner = read(ownerDocumentOf, el);
      if (owner && read(scrollingElementOf, owner) === el) {
        scrollable = cs.overflowY !== "hidden" && (sh > ch + 1 || sw > cw + 1);
      } else if (box) {
        const yScroll = cs.overflowY === "auto" || cs.overflowY === "scroll";
        const xScroll = cs.overflowX === "auto" || cs.overflowX === "scroll";
        scrollable = (yScroll && sh > ch + 1) || (xScroll && sw > cw + 1);
      }
      if (label) node.label = label;
      if (value) node.value = value;
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
      info = !!(label || value || identifier || clickable || scrollable || checked !== null || node.focused);
    }

    // The frame: the own box clipped by overflow ancestors, else the extent of the contents.
    if (box) {
      const visibleBox = intersect(box, ownClip);
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
        if (t) f = normalize(intersect(t, ownClip));
      }
      if (!(f[2] > 0) && at) f = normalize(at);
      node.frame = f;
    }

    if (depth > 0) {
      if (!info) {
        if (kids.length === 0 && (!box || hidden)) return null;
        // Wrappers that say nothing give way to their only child.
        if (kids.length === 1 && (hidden || tag === "div" || (!box && tag === "span"))) return kids[0];
      }
    }
    if (hidden && !node.role) node.role = tag;
    if (kids.length) node.children = kids;
    return node;
  };

  const rootEl = read(documentElementOf, document);
  if (!rootEl) return { tree: null, error: "the document has no root element", w: W, h: H };
  const view = [0, 0, W, H];
  const tree = walk(rootEl, 0, 0, 0, view, view, false);
  if (!tree) return { tree: null, error: "the root element is hidden", w: W, h: H };
  tree.frame = [0, 0, 1, 1];
  if (kept) globalThis.__argentRefs = kept;
  return { tree: tree, truncated: truncated, scroll: scrollMarks.join(";"), w: W, h: H };
})
