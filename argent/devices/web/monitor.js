// The page monitor of argent's chromium device: tells when the page is quiet.
//
// Evaluated once per document in argent's isolated world (Page.createIsolatedWorld), so the page
// neither sees it nor can tamper with it (its globals, prototypes, requestAnimationFrame and
// MutationObserver are the world's own). It installs `globalThis.__argent` with:
//
//   wait(timeoutMs, minFrames, after, slack, paint) -> Promise<{quiet, mark, tick}>
//     resolves once the page is quiet: no DOM mutation (document, open shadow roots, same-origin
//     iframes) for two animation frames (two frames ran without one; a change made before a
//     frame began is shown by that frame), the parser done; with `paint` 1 (a capture of the
//     pixels) no running finite CSS animation or transition either (an infinite one never ends,
//     waiting cannot help). Without it an animation holds nothing: a person does not wait for a
//     tab's indicator to slide or a hover colour to fade before acting elsewhere — an action
//     waits for its own target to hold still (`still`). With `minFrames` (input
//     was sent since the last quiet), also at least that many frames after the input — counted
//     from the last input event the page saw since then (pointer, key, wheel, scroll, input),
//     else from the call — so its effects (timers, frame callbacks, scroll handlers) get their
//     frames; with `after` (a mark), also only once the page has changed past that mark. With
//     `slack` 1 it resolves one frame early (for a capture whose own frame is the last one: the
//     caller then waits for the full quiet and keeps the capture only when that came at the
//     very next frame, `tick` + 1). At `timeoutMs` it resolves with quiet=false. `mark` counts
//     mutations (on from the document's start: see `count`), `tick` frames.
//   mark() -> the current mutation count.
//   still(x, y, timeoutMs) -> Promise<boolean>
//     resolves once the element at (x, y) CSS px holds its place: the same element with the same
//     box in two frames in a row — at once when no finite animation runs that moves or sizes
//     anything (one of colours, shadows, filters or opacity alone only repaints); true when it
//     moved (or another element came there) since the call, so a read made before is stale. At
//     `timeoutMs`, as it is.
//   waitFocus(timeoutMs, x, y, graceMs) -> Promise<{ok, editable, frame?}>
//     resolves ok once focus sits on an element that takes text; or, `graceMs` after the call,
//     on the element at (x, y) CSS px (or one containing it / inside it) — a tapped button or
//     widget that keeps the focus itself gets that long to hand it on (a search button that
//     focuses its field); not ok at the deadline. `editable`: the focus then takes text. Once
//     the focus sits in an iframe at (x, y) whose document this world cannot enter, it resolves
//     at once with that frame's id (`frame`, from `__argentFrameIds`): the device asks that frame.
//   reveal(ref) -> scrolls the element a kept walk (`refs`) numbered `ref` into the middle of
//     its scroll containers; false when that element is gone.
//   editable() -> whether the focused element takes text (an insert types into it).
//   active() -> the focused element, deepest; isEditable(el) -> whether `el` takes text.
//
// A frame is looked at in a task right after its requestAnimationFrame callbacks (so the page's
// own frame callbacks have had their say); a 250 ms timer stands in when no frame comes (a hidden
// or throttled page), so a wait always ends by its deadline.
(function () {
  "use strict";
  if (globalThis.__argent) return true;
  const OPTIONS = { subtree: true, childList: true, attributes: true, characterData: true };
  const FALLBACK_TICK_MS = 250;
  const NOT_TEXT = {
    button: 1, checkbox: 1, color: 1, file: 1, hidden: 1, image: 1, radio: 1, range: 1, reset: 1, submit: 1,
  };

  // Mutations seen, counted on from when this document's navigation began (in µs since the epoch,
  // a safe integer until the 2250s): a mark taken in the document before lies below this one's
  // count (unless it saw a million changes a second), so a change wait carried over a navigation
  // (argent's world made again, the same wait sent to the new document) ends once the new page is
  // quiet — a new document is a change — where from 0 it waited out its timeout after page loads.
  let count = Math.floor(performance.timeOrigin * 1000) || 0;
  let quietFrames = 0; // frames in a row without a mutation
  let stillFrames = 0; // frames in a row without a mutation or a running finite animation (`paint`)
  let ticks = 0; // frames seen
  let inputTick = -1; // `ticks` at the last input event
  let quietTick = -1; // `ticks` when a wait last resolved quiet
  let dirty = true; // a mutation since the last frame (a fresh monitor knows nothing yet)
  let lastMutation = Infinity; // when (performance.now()) the last mutation was seen
  let frameStart = -Infinity; // when the frame being looked at began (its rAF timestamp)
  let scheduled = 0;
  const observed = new WeakSet();
  const waiters = new Set();

  const observer = new MutationObserver(function (records) {
    count += records.length;
    dirty = true;
    lastMutation = performance.now();
    for (let i = 0; i < records.length; i++) {
      const added = records[i].addedNodes;
      for (let j = 0; j < added.length; j++) {
        if (added[j].nodeType === 1) scanRoot(added[j], true);
      }
    }
    schedule();
  });

  const observe = function (root) {
    if (observed.has(root)) return;
    observed.add(root);
    observer.observe(root, OPTIONS);
  };
  // Observe the open shadow roots and same-origin iframe documents under `root` (and at it).
  const scanRoot = function (root, self) {
    const visit = function (el) {
      const sr = el.shadowRoot;
      if (sr && !observed.has(sr)) {
        observe(sr);
        scanRoot(sr, false);
      }
      const tag = el.localName;
      if (tag === "iframe" || tag === "frame") {
        let doc = null;
        try { doc = el.contentDocument; } catch (e) { doc = null; }
        if (doc && !observed.has(doc)) {
          observe(doc);
          if (doc.documentElement) scanRoot(doc.documentElement, true);
        }
      }
    };
    if (self) visit(root);
    const all = root.querySelectorAll ? root.querySelectorAll("*") : [];
    for (let i = 0; i < all.length; i++) visit(all[i]);
  };

  // Properties whose animation changes only how things are painted: never where anything is, how
  // big, or whether it is shown (opacity keeps an element in place and hit by the pointer).
  const PAINT_ONLY = {
    color: 1, "background-color": 1, "border-top-color": 1, "border-right-color": 1,
    "border-bottom-color": 1, "border-left-color": 1, "border-color": 1, "outline-color": 1,
    "box-shadow": 1, "text-shadow": 1, "text-decoration-color": 1, "caret-color": 1,
    "column-rule-color": 1, "accent-color": 1, fill: 1, stroke: 1, "stop-color": 1,
    "flood-color": 1, "lighting-color": 1, opacity: 1, filter: 1, "backdrop-filter": 1,
  };
  const KEYFRAME_KEYS = { offset: 1, easing: 1, composite: 1, computedOffset: 1 };
  const paintOnlyOf = new WeakMap();
  const kebab = function (name) {
    return name.replace(/[A-Z]/g, function (c) { return "-" + c.toLowerCase(); });
  };
  // Whether the animation animates paint-only properties alone (looked up once per animation).
  const paintOnly = function (a) {
    let known = paintOnlyOf.get(a);
    if (known !== undefined) return known;
    known = false;
    try {
      if (typeof a.transitionProperty === "string") {
        known = PAINT_ONLY[a.transitionProperty] === 1;
      } else if (a.effect && typeof a.effect.getKeyframes === "function") {
        const frames = a.effect.getKeyframes();
        let any = false;
        known = true;
        for (let i = 0; i < frames.length && known; i++) {
          for (const key in frames[i]) {
            if (KEYFRAME_KEYS[key] === 1) continue;
            any = true;
            if (PAINT_ONLY[kebab(key)] !== 1) { known = false; break; }
          }
        }
        known = known && any;
      }
    } catch (e) { known = false; }
    paintOnlyOf.set(a, known);
    return known;
  };
  // What runs now: 0 nothing finite, 1 paint-only animations alone, 2 one that moves or shows things.
  const animating = function () {
    let list;
    try { list = document.getAnimations(); } catch (e) { return 0; }
    let found = 0;
    for (let i = 0; i < list.length; i++) {
      const a = list[i];
      if (a.playState !== "running") continue;
      let end = Infinity;
      try { end = a.effect ? a.effect.getComputedTiming().endTime : Infinity; } catch (e) { end = Infinity; }
      if (end === Infinity) continue;
      if (!paintOnly(a)) return 2;
      found = 1;
    }
    return found;
  };

  const settle = function () {
    const now = performance.now();
    waiters.forEach(function (w) {
      const met =
        (w.paint ? stillFrames : quietFrames) >= 2 - w.slack &&
        document.readyState !== "loading" &&
        ticks - w.from >= w.minFrames - w.slack &&
        (w.after < 0 || count > w.after);
      if (met || now >= w.deadline) {
        if (met && !w.slack) quietTick = ticks;
        waiters.delete(w);
        clearTimeout(w.timer);
        w.resolve({ quiet: met, mark: count, tick: ticks });
      }
    });
  };

  const tick = function () {
    scheduled = 0;
    ticks++;
    if (dirty) {
      // A change made before this frame began is one this frame already shows: the frame counts
      // as a quiet one; a change made during it (its frame callbacks) does not.
      dirty = false;
      quietFrames = stillFrames = lastMutation < frameStart ? 1 : 0;
    } else {
      quietFrames++;
      stillFrames = animating() ? 0 : stillFrames + 1;
    }
    settle();
    if (stillFrames < 2 || waiters.size || ticks - inputTick < 2) schedule();
  };

  const schedule = function () {
    if (scheduled) return;
    const token = (scheduled = ticks + 1);
    const fire = function () {
      if (scheduled === token) tick();
    };
    // Looked at once the frame's callbacks all ran (the page's own frame callbacks may come
    // after ours in the same frame, and what they change counts for that frame).
    requestAnimationFrame(function (start) {
      setTimeout(function () {
        if (scheduled === token) frameStart = start;
        fire();
      }, 0);
    });
    setTimeout(function () {
      if (scheduled === token) frameStart = -Infinity; // no frame: nothing is known to be shown
      fire();
    }, FALLBACK_TICK_MS);
  };

  const wait = function (timeoutMs, minFrames, after, slack, paint) {
    // Shadow roots attached after their host was inserted (a late custom-element upgrade) have
    // no mutation of their own that would announce them: look again before every wait.
    if (document.documentElement) scanRoot(document.documentElement, true);
    if (paint === 1 && animating()) stillFrames = 0;
    return new Promise(function (resolve) {
      const w = {
        from: inputTick >= 0 && inputTick >= quietTick ? inputTick : ticks,
        minFrames: minFrames > 0 ? minFrames : 0,
        after: typeof after === "number" ? after : -1,
        slack: slack === 1 ? 1 : 0,
        paint: paint === 1,
        deadline: performance.now() + timeoutMs,
        resolve: resolve,
        timer: 0,
      };
      waiters.add(w);
      w.timer = setTimeout(settle, Math.max(0, timeoutMs));
      settle();
      if (waiters.has(w)) schedule();
    });
  };

  // Focus: the deepest active element, through open shadow roots and same-origin iframes.
  const deepActive = function () {
    let el = document.activeElement;
    for (let hops = 0; el && hops < 64; hops++) {
      const sr = el.shadowRoot;
      if (sr && sr.activeElement) { el = sr.activeElement; continue; }
      if (el.localName === "iframe" || el.localName === "frame") {
        let doc = null;
        try { doc = el.contentDocument; } catch (e) { doc = null; }
        if (doc && doc.activeElement && doc.activeElement !== doc.body) { el = doc.activeElement; continue; }
      }
      break;
    }
    return el;
  };
  const editable = function (el) {
    if (el.isContentEditable) return true;
    if (el.localName === "textarea") return !el.readOnly && !el.disabled;
    if (el.localName === "input") return !NOT_TEXT[String(el.type)] && !el.readOnly && !el.disabled;
    return false;
  };
  const hitAt = function (x, y) {
    let hit = document.elementFromPoint(x, y);
    for (let hops = 0; hit && hit.shadowRoot && hops < 64; hops++) {
      const inner = hit.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === hit) break;
      hit = inner;
    }
    return hit;
  };
  const focusOk = function (x, y, handed) {
    const el = deepActive();
    if (!el || el === document.body || el === document.documentElement) return false;
    if (editable(el)) return true;
    if (!handed) return false;
    const hit = hitAt(x, y);
    return !!hit && (hit === el || el.contains(hit) || hit.contains(el));
  };
  // The id of the iframe at (x, y) that holds the focus, when this world cannot enter it.
  const focusedFrame = function (x, y) {
    const el = deepActive();
    if (!el || el.localName !== "iframe") return null;
    let doc = null;
    try { doc = el.contentDocument; } catch (e) { doc = null; }
    const ids = globalThis.__argentFrameIds;
    const id = !doc && ids ? ids.get(el) : undefined;
    return typeof id === "string" && hitAt(x, y) === el ? id : null;
  };
  const waitFocus = function (timeoutMs, x, y, graceMs) {
    return new Promise(function (resolve) {
      const start = performance.now();
      const deadline = start + timeoutMs;
      let done = false;
      const finish = function (ok, frame) {
        if (done) return;
        done = true;
        window.removeEventListener("focusin", check, true);
        clearTimeout(timer);
        const el = deepActive();
        const out = { ok: ok, editable: !!el && editable(el) };
        if (frame) out.frame = frame;
        resolve(out);
      };
      const check = function () {
        const frame = focusedFrame(x, y);
        if (frame) finish(false, frame);
        else if (focusOk(x, y, performance.now() - start >= graceMs)) finish(true);
        else if (performance.now() >= deadline) finish(false);
        else if (!done) requestAnimationFrame(check);
      };
      const timer = setTimeout(function () { finish(focusOk(x, y, true)); }, Math.max(0, timeoutMs));
      window.addEventListener("focusin", check, true);
      check();
    });
  };

  // Where the element at (x, y) is: [element, left, top, width, height], or null.
  const boxAt = function (x, y) {
    const el = hitAt(x, y);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return [el, r.left, r.top, r.width, r.height];
  };
  const sameBox = function (a, b) {
    if (!a || !b) return a === b;
    for (let i = 0; i < 5; i++) if (a[i] !== b[i]) return false;
    return true;
  };
  const still = function (x, y, timeoutMs) {
    return new Promise(function (resolve) {
      if (animating() < 2) {
        resolve(false);
        return;
      }
      const deadline = performance.now() + timeoutMs;
      let last = boxAt(x, y);
      let moved = false;
      let token = 0;
      const look = function () {
        token++;
        const now = boxAt(x, y);
        if (sameBox(now, last) || performance.now() >= deadline) {
          resolve(moved || !sameBox(now, last));
          return;
        }
        moved = true;
        last = now;
        next();
      };
      const next = function () {
        const mine = ++token;
        requestAnimationFrame(function () { setTimeout(function () { if (token === mine) look(); }, 0); });
        setTimeout(function () { if (token === mine) look(); }, FALLBACK_TICK_MS);
      };
      next();
    });
  };

  const reveal = function (ref) {
    const kept = globalThis.__argentRefs;
    const el = kept ? kept[ref] : null;
    if (!el || !el.isConnected) return false;
    el.scrollIntoView({ block: "center", inline: "center", behavior: "instant" });
    return true;
  };

  // Input the page saw: the frames after input are counted from here (and get ticked).
  const INPUT_EVENTS = [
    "pointerdown", "pointerup", "mousedown", "mouseup", "click", "dblclick", "keydown", "keyup",
    "beforeinput", "input", "wheel", "scroll", "touchstart", "touchend",
  ];
  const onInput = function () {
    inputTick = ticks;
    schedule();
  };
  for (let i = 0; i < INPUT_EVENTS.length; i++) {
    window.addEventListener(INPUT_EVENTS[i], onInput, { capture: true, passive: true });
  }

  observe(document);
  if (document.documentElement) scanRoot(document.documentElement, true);
  schedule();
  globalThis.__argent = {
    wait: wait,
    mark: function () { return count; },
    still: still,
    waitFocus: waitFocus,
    reveal: reveal,
    editable: function () { const el = deepActive(); return !!el && editable(el); },
    active: deepActive,
    isEditable: function (el) { return !!el && editable(el); },
  };
  return true;
})()
