"""Whether typed keys would be seen by the page: the question ``enter_text`` asks before it inserts text
in one edit instead of key by key.

WebDriver BiDi cannot list a page's event listeners (Chromium's DevTools can). So a preload script in
each document's own realm, run before any of the page's scripts, notes whether a ``keydown``,
``keypress`` or ``keyup`` listener was ever added in that realm: ``addEventListener`` becomes a proxy of
itself (it still answers as native code) that notes the type, then calls the original. The answer is
one frozen function on ``window`` under a per-process random name; it says "keys" when a key listener
was added anywhere in the realm, when an ``on<key>`` handler sits on the focused element's way up to
the window, when the focus is in another document (a frame), and whenever it cannot tell.
"""

from __future__ import annotations

import json
import secrets

#: The property of ``window`` the answer is under (random per process: a page cannot aim at it).
NAME = f"__argentKeys{secrets.token_hex(6)}"

_PRELOAD = """() => {
  const NAME = %(name)s;
  if (Object.prototype.hasOwnProperty.call(window, NAME)) return;
  const apply = Reflect.apply;
  const add = EventTarget.prototype.addEventListener;
  const activeOf = Object.getOwnPropertyDescriptor(Document.prototype, "activeElement").get;
  const parentOf = Object.getOwnPropertyDescriptor(Node.prototype, "parentNode").get;
  const hostOf = Object.getOwnPropertyDescriptor(ShadowRoot.prototype, "host").get;
  const localNameOf = Object.getOwnPropertyDescriptor(Element.prototype, "localName").get;
  let heard = false;
  EventTarget.prototype.addEventListener = new Proxy(add, {
    apply(target, self, args) {
      const type = args[0];
      if (typeof type !== "string" || type === "keydown" || type === "keypress" || type === "keyup") heard = true;
      return apply(target, self, args);
    },
  });
  const handled = (node) => node.onkeydown != null || node.onkeypress != null || node.onkeyup != null;
  const frames = new Set(["iframe", "frame", "object", "embed"]);
  const keys = () => {
    try {
      if (heard) return true;
      let node = apply(activeOf, document, []);
      if (node && frames.has(apply(localNameOf, node, []))) return true;
      while (node) {
        if (handled(node)) return true;
        let up = apply(parentOf, node, []);
        if (up === null) {
          try { up = apply(hostOf, node, []); } catch (e) { up = null; }
        }
        node = up;
      }
      return handled(window);
    } catch (e) {
      return true;
    }
  };
  Object.defineProperty(window, NAME, { value: Object.freeze(keys), enumerable: false, writable: false, configurable: false });
}"""


def preload_function() -> str:
    """The preload script of the page's own realm."""
    return _PRELOAD % {"name": json.dumps(NAME)}


#: What ``script.evaluate`` in the page's realm answers: true unless the page surely hears no key.
QUERY = f"(() => {{ const keys = window[{json.dumps(NAME)}]; return typeof keys === 'function' ? keys() : true; }})()"
