// The preview pane's address bar follows navigation inside the frame. The frame is another
// origin, so the pane cannot read its location: instead, pages the frame navigates to get one
// small script that tells the parent window where it is (on load, history.pushState/
// replaceState, back/forward, hash changes). Only navigations are touched (Sec-Fetch-Dest
// iframe or document: a fetch() of HTML comes back as the app sent it), only uncompressed
// HTML (the navigation asks the app for identity encoding), and the script goes right after the
// doctype, so the page keeps its rendering mode. The message carries the path only, and only to
// a parent: a page opened in a tab of its own posts nothing.
import type { IncomingMessage } from "node:http";
import { PREVIEW_LOCATION } from "../protocol/preview";

const SCRIPT = Buffer.from(
  `<script data-quiver-preview>(()=>{if(parent===window)return;const t=()=>parent.postMessage({type:${JSON.stringify(PREVIEW_LOCATION)},path:location.pathname+location.search+location.hash},"*");` +
    `for(const k of["pushState","replaceState"]){const f=history[k];history[k]=function(...a){const r=f.apply(this,a);t();return r}}` +
    `addEventListener("popstate",t);addEventListener("hashchange",t);t()})()</script>`,
);

/** A request the frame (or a tab) navigates with, as opposed to a fetch of the page's own. */
export function isNavigation(req: IncomingMessage): boolean {
  const dest = req.headers["sec-fetch-dest"];
  return (req.method ?? "GET").toUpperCase() === "GET" && (dest === "iframe" || dest === "document");
}

/** Whether an answer to a navigation can carry the script (a Content-Length it had is dropped:
 *  the body goes out chunked, its length decided as it streams). */
export function injectable(status: number, headers: Map<string, string[]>): boolean {
  if (status < 200 || status === 204 || status === 304) return false;
  const type = headers.get("content-type")?.[0] ?? "";
  const encoding = headers.get("content-encoding")?.[0] ?? "identity";
  // An ASCII script in a UTF-16 page would be garbage.
  return (
    /^\s*text\/html\b/i.test(type) &&
    !/charset\s*=\s*"?utf-?16/i.test(type) &&
    encoding.trim().toLowerCase() === "identity"
  );
}

// How much of the body is read before deciding where the script goes.
const LOOKAHEAD = 4096;
const BOM = "\xEF\xBB\xBF";

/** Where the script goes in the body's first bytes (latin1): after the doctype; where the
 *  content starts when there is none (quirks mode either way); "more" while undecided. */
function placeIn(text: string): number | "more" {
  if (text.startsWith("\xFE\xFF") || text.startsWith("\xFF\xFE")) return -1;
  const start = text.startsWith(BOM) ? BOM.length : 0;
  let i = start;
  // Whitespace and comments may come before the doctype without changing the mode.
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i++;
    if (!text.startsWith("<!--", i)) break;
    const close = text.indexOf("-->", i + 4);
    if (close < 0) return "more";
    i = close + 3;
  }
  const rest = text.slice(i);
  const doctype = /^<!doctype[^>]*>/i.exec(rest);
  if (doctype) return i + doctype[0].length;
  if (rest.length < 9 ? "<!doctype".startsWith(rest.toLowerCase()) : /^<!doctype/i.test(rest)) return "more";
  return start;
}

/**
 * Puts the script into a streamed HTML body. Bytes are held only until the place is known (at
 * most LOOKAHEAD of them); `push` returns what may be written now, `end` what is still held.
 */
export function createInjector() {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let done = false;

  const place = (head: Buffer, final: boolean): Buffer | undefined => {
    let at = placeIn(head.toString("latin1"));
    if (at === "more") {
      if (!final && head.length < LOOKAHEAD) return undefined;
      at = head.toString("latin1").startsWith(BOM) ? BOM.length : 0;
    }
    if (at < 0) return head;
    return Buffer.concat([head.subarray(0, at), SCRIPT, head.subarray(at)]);
  };

  return {
    push(chunk: Buffer): Buffer | undefined {
      if (done) return chunk;
      held.push(chunk);
      heldBytes += chunk.length;
      const out = place(Buffer.concat(held, heldBytes), false);
      if (out) {
        done = true;
        held = [];
      }
      return out;
    },
    end(): Buffer | undefined {
      if (done || heldBytes === 0) return undefined;
      done = true;
      const out = place(Buffer.concat(held, heldBytes), true);
      held = [];
      return out;
    },
  };
}
