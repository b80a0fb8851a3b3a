// Form controls of argent's chromium device: focus without a click, select a field's text, choose the
// options of a native select.
//
// Evaluated once per document in argent's isolated world, after the monitor (whose `active` and
// `isEditable` it uses). It installs `globalThis.__argentForms` with:
//
//   focusAt(x, y) -> {state, editable}
//     the element at (x, y) CSS px (through open shadow roots and same-origin frames): `kept` when
//     a field that has the focus is it, holds it, or lies in the element that would take it; else
//     that element — the hit itself or its nearest ancestor that takes the focus, the control of a
//     <label>, an editable element's editing host — when it is a text field (input, textarea,
//     editable element) gets the focus without a click (the caret and selection stay where the
//     page puts them): `focused`; `none` when no field there takes it (a button, a widget: tap it).
//   selectAll() -> whether the focused field's whole text is now selected (typing replaces it).
//   choose(x, y, choices, byValue, listed) -> {problem, changed, tag, wanted, options, more}
//     in the native select at (x, y) (or under an overlay there, or the control of a label),
//     exactly the options whose label (or value) is in `choices` become selected; `input` and
//     `change` fire (bubbling) when that changed the choice. `problem`: not-select, disabled,
//     not-multiple, missing, disabled-option; `options` the first `listed` labels (or values).
(function () {
  "use strict";
  if (globalThis.__argentForms) return true;
  const A = globalThis.__argent;
  const MAX_HOPS = 64;

  // The parent of `el` across shadow roots and same-origin frames (an iframe's document's root
  // element has its iframe as parent).
  const parentOf = function (el) {
    if (el.parentElement) return el.parentElement;
    const p = el.parentNode;
    if (p && p.host) return p.host;
    if (p && p.nodeType === 9) {
      try { return p.defaultView ? p.defaultView.frameElement : null; } catch (e) { return null; }
    }
    return null;
  };
  const holds = function (outer, inner) {
    for (let el = inner, h = 0; el && h < 4096; el = parentOf(el), h++) if (el === outer) return true;
    return false;
  };
  const isFrame = function (el) { return el.localName === "iframe" || el.localName === "frame"; };
  const frameDoc = function (el) {
    try { return el.contentDocument; } catch (e) { return null; }
  };

  // The element at (x, y) of the top viewport, in the deepest open shadow root or same-origin frame.
  const deepHit = function (x, y) {
    let hit = document.elementFromPoint(x, y);
    for (let hops = 0; hit && hops < MAX_HOPS; hops++) {
      const sr = hit.shadowRoot;
      if (sr) {
        const inner = sr.elementFromPoint(x, y);
        if (inner && inner !== hit) { hit = inner; continue; }
      }
      const doc = isFrame(hit) ? frameDoc(hit) : null;
      if (doc) {
        const box = hit.getBoundingClientRect();
        const style = hit.ownerDocument.defaultView.getComputedStyle(hit);
        x -= box.left + hit.clientLeft + (parseFloat(style.paddingLeft) || 0);
        y -= box.top + hit.clientTop + (parseFloat(style.paddingTop) || 0);
        const inner = doc.elementFromPoint(x, y);
        if (inner) { hit = inner; continue; }
      }
      break;
    }
    return hit;
  };

  const editingHost = function (el) {
    let host = el;
    for (let p = parentOf(host), h = 0; p && p.isContentEditable && h < 4096; p = parentOf(p), h++) host = p;
    return host;
  };
  // Whether `el` takes the focus (what a click on it would focus).
  const focusable = function (el) {
    const tag = el.localName;
    if (tag === "input") return el.type !== "hidden" && !el.disabled;
    if (tag === "textarea" || tag === "select" || tag === "button") return !el.disabled;
    if (tag === "a" || tag === "area") return el.hasAttribute("href") || el.hasAttribute("tabindex");
    if (tag === "summary") return true;
    if (el.isContentEditable) return true;
    return el.hasAttribute("tabindex") && !el.disabled;
  };
  const blank = function (el) {
    return !el || el.localName === "body" || el.localName === "html";
  };

  const focusAt = function (x, y) {
    const hit = deepHit(x, y);
    if (!hit) return { state: "none", editable: false };
    const active = A.active();
    const typing = !blank(active) && A.isEditable(active);
    if (typing && holds(active, hit)) return { state: "kept", editable: true };
    let target = null;
    for (let el = hit, h = 0; el && !target && h < 4096; el = parentOf(el), h++) {
      if (isFrame(el) && el === hit) return { state: "none", editable: false }; // a frame argent cannot see into
      if (el.localName === "label") {
        target = el.control || null;
        if (!target) break;
      } else if (focusable(el)) {
        target = el.isContentEditable ? editingHost(el) : el;
      }
    }
    // Only a field is focused here: a button or a widget gets the click it expects (and may hand
    // the focus on).
    if (!target || !A.isEditable(target)) return { state: "none", editable: false };
    if (typing && holds(target, active)) return { state: "kept", editable: true };
    target.focus({ preventScroll: true });
    const now = A.active();
    if (blank(now) || !holds(target, now)) return { state: "none", editable: false };
    return { state: "focused", editable: A.isEditable(now) };
  };

  const selectAll = function () {
    const el = A.active();
    if (blank(el) || !A.isEditable(el)) return false;
    if (el.localName === "input" || el.localName === "textarea") {
      el.select();
      return true;
    }
    const host = editingHost(el);
    const doc = host.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(host);
    const selection = doc.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    return true;
  };

  // The native select at (x, y): the hit or what it lies in, the control of a label there, else the
  // first select among the elements under the point (a styled select under its overlay).
  const selectAt = function (x, y) {
    const hit = deepHit(x, y);
    for (let el = hit, h = 0; el && h < 4096; el = parentOf(el), h++) {
      if (el.localName === "select") return { select: el, hit: hit };
      if (el.localName === "label" && el.control && el.control.localName === "select") {
        return { select: el.control, hit: hit };
      }
    }
    const under = document.elementsFromPoint(x, y);
    for (let i = 0; i < under.length; i++) {
      if (under[i].localName === "select") return { select: under[i], hit: hit };
    }
    return { select: null, hit: hit };
  };
  const labelOf = function (option) {
    return String(option.label).replace(/\s+/g, " ").trim();
  };
  const tidy = function (text) {
    return String(text).replace(/\s+/g, " ").trim();
  };

  const choose = function (x, y, choices, byValue, listed) {
    const at = selectAt(x, y);
    const select = at.select;
    const out = { problem: null, changed: false, tag: "", wanted: "", options: [], more: 0 };
    if (!select) {
      out.problem = "not-select";
      out.tag = at.hit ? at.hit.localName : "";
      return out;
    }
    const options = Array.prototype.slice.call(select.options);
    const names = options.map(function (o) { return byValue ? o.value : labelOf(o); });
    out.options = names.slice(0, listed);
    out.more = Math.max(0, names.length - listed);
    if (select.matches(":disabled")) { out.problem = "disabled"; return out; }
    if (choices.length > 1 && !select.multiple) { out.problem = "not-multiple"; return out; }
    const picked = [];
    for (let i = 0; i < choices.length; i++) {
      const want = byValue ? String(choices[i]) : tidy(choices[i]);
      const index = names.indexOf(want);
      if (index < 0) { out.problem = "missing"; out.wanted = String(choices[i]); return out; }
      if (options[index].matches(":disabled")) {
        out.problem = "disabled-option";
        out.wanted = String(choices[i]);
        return out;
      }
      picked.push(options[index]);
    }
    const before = options.map(function (o) { return o.selected; });
    select.focus({ preventScroll: true });
    for (let i = 0; i < options.length; i++) options[i].selected = picked.indexOf(options[i]) >= 0;
    out.changed = options.some(function (o, i) { return o.selected !== before[i]; });
    if (out.changed) {
      select.dispatchEvent(new Event("input", { bubbles: true, composed: true }));
      select.dispatchEvent(new Event("change", { bubbles: true }));
    }
    return out;
  };

  globalThis.__argentForms = { focusAt: focusAt, selectAll: selectAll, choose: choose };
  return true;
})()
