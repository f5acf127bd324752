// What a share-link viewer follows (live, or a replay folded or not) redacted over each joined
// stream, not event by event: a key split across `text.delta`, `reasoning.delta` or
// `tool.progress` pieces is caught whole. Per subscription, each stream (a turn's text, its
// reasoning, a call's output) holds back the text that may still be part of a secret: its last
// word, a line naming a secret-named key, `Bearer ` before its token, a private key from its
// BEGIN line until its END line; the rest is redacted and released. Events leave in their
// order and with their own seq, a piece once all its text is decided (so a reconnect resumes
// exactly); a stream's held tail is released when the stream ends (the event that ends it
// waits behind it). At most HOLD_CAP characters are held per stream: past it, text is released
// but for a tail longer than any bounded secret, and a secret still running at the cut keeps
// being dropped until it ends. The owner's events never pass here.
import RE2 from "re2";
import type { SessionEvent } from "../protocol/events";
import { findSecrets, redactDeep, REDACTED, SECRET_NAME, SECRET_NAME_HINT, verbatim, type SecretKind } from "./redact";

type Piece = Extract<SessionEvent, { type: "text.delta" | "reasoning.delta" | "tool.progress" }>;

/** Most text one stream holds back (a private key fits several times). */
export const HOLD_CAP = 32 * 1024;
/** What a release forced by HOLD_CAP still holds: longer than any secret of bounded length. */
const HOLD_TAIL = 4 * 1024;
/** Events waiting behind a held stream before that stream is released as if it had ended. */
const MAX_WAITING = 4_096;

/** A secret-named key on the current line, before `=`/`:` or at the line's end (still typing). */
const KEY_ON_LINE = new RE2(`${SECRET_NAME}[A-Za-z0-9_-]*["']?\\s*(?:[:=]|$)`, "iu");
/** A secret-named key and its `=`/`:` ending what came before: the value is on the next line. */
const KEY_BEFORE = new RE2(`${SECRET_NAME}[A-Za-z0-9_-]*["']?\\s*[:=]\\s*$`, "iu");
const BEARER_BEFORE = /(?:^|[^A-Za-z0-9])((?:Bearer|Basic)\s+)$/i;
const PEM_HEADER_OPEN = /^-----BEGIN[A-Z0-9 ]*-{0,4}$/;
const PEM_KEY = /^-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;
const PEM_END = /-----END [A-Z0-9 ]*PRIVATE KEY-----/;
const NOT_PEM_BODY = /[^A-Za-z0-9+/=\s:,-]/;

function streamKey(ev: SessionEvent): string | undefined {
  switch (ev.type) {
    case "text.delta":
      return `text:${ev.turnId}`;
    case "reasoning.delta":
      return `reasoning:${ev.turnId}`;
    case "tool.progress":
      return `progress:${ev.callId}`;
    default:
      return undefined;
  }
}

const pieceText = (ev: Piece) => (ev.type === "tool.progress" ? ev.chunk : ev.text);

/** Which open streams an event ends (a piece of another kind ends the kinds before it). */
function ends(ev: SessionEvent, key: string): boolean {
  switch (ev.type) {
    case "text.delta":
      return key.startsWith("reasoning:");
    case "reasoning.delta":
      return key.startsWith("text:");
    case "runner.status":
    case "files.changed":
    case "notice":
    case "usage":
      return false;
    case "turn.started":
    case "turn.finished":
    case "message.user":
    case "error":
      return true;
    case "tool.finished":
      return key === `progress:${ev.callId}` || !key.startsWith("progress:");
    default:
      return !key.startsWith("progress:");
  }
}

function lastWhitespace(s: string): number {
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 11) return i;
  }
  return -1;
}

/** How much of `text` (starting where no secret runs across) can no longer be part of a secret. */
export function safeCut(text: string): number {
  let cut = lastWhitespace(text) + 1;
  if (cut > 0) {
    const bearer = BEARER_BEFORE.exec(text.slice(Math.max(0, cut - 64), cut));
    if (bearer) cut -= bearer[1].length;
  }
  const lineStart = text.lastIndexOf("\n") + 1;
  const line = text.slice(lineStart);
  if (lineStart < cut && SECRET_NAME_HINT.test(line) && KEY_ON_LINE.test(line)) cut = lineStart;
  if (lineStart > 0) {
    const from = Math.max(0, lineStart - 512);
    const before = text.slice(from, lineStart);
    const key = SECRET_NAME_HINT.test(before) ? KEY_BEFORE.exec(before) : null;
    if (key) cut = Math.min(cut, text.lastIndexOf("\n", from + key.index) + 1);
  }
  const begin = text.lastIndexOf("-----BEGIN");
  if (begin >= 0 && begin < cut) {
    const rest = text.slice(begin);
    if (PEM_HEADER_OPEN.test(rest) || (PEM_KEY.test(rest) && !PEM_END.test(rest))) cut = begin;
  }
  return cut;
}

interface Slot {
  ev: SessionEvent;
  stream?: Stream;
  /** A piece's end in its stream's text. */
  end: number;
  /** A piece's text as the viewer gets it, built as its stream is decided. */
  out: string;
}

class Stream {
  /** The undecided text, from `base` on. */
  private raw = "";
  /** Everything before this offset of the stream's text is decided. */
  base = 0;
  private length = 0;
  /** A secret ran past a forced release: the rest of it is dropped. */
  private absorbing: SecretKind | undefined;
  private slots: Slot[] = [];

  add(slot: Slot, text: string) {
    this.raw += text;
    this.length += text.length;
    slot.end = this.length;
    this.slots.push(slot);
  }

  settle(final: boolean) {
    if (this.absorbing) this.absorb(final);
    if (this.absorbing) return this.prune();
    let cut = final ? this.raw.length : safeCut(this.raw);
    if (this.raw.length - cut > HOLD_CAP) cut = this.forcedCut();
    else if (cut > 0 && cut < this.raw.length) {
      // A secret found whole may hold whitespace (a key block, `Bearer x`): never cut inside it.
      const across = findSecrets(this.raw).find((s) => s.start < cut && cut < s.end);
      if (across) cut = across.start;
    }
    this.commit(cut);
    this.prune();
  }

  /** Pieces wholly decided are out of the stream's hands (the queue hands them out). */
  private prune() {
    let n = 0;
    while (n < this.slots.length && this.slots[n].end <= this.base) n++;
    if (n > 0) this.slots = this.slots.slice(n);
  }

  private forcedCut(): number {
    let cut = this.raw.length - HOLD_TAIL;
    const ws = lastWhitespace(this.raw.slice(cut - 256, cut));
    if (ws >= 0) cut = cut - 256 + ws + 1;
    const across = findSecrets(this.raw).find((s) => s.start < cut && cut < s.end);
    if (!across) return cut;
    if (across.start > 0) return across.start;
    if (across.end >= this.raw.length) this.absorbing = across.kind;
    return across.end;
  }

  private absorb(final: boolean) {
    const text = this.raw;
    let stop = -1;
    if (this.absorbing === "word") stop = text.search(/\s/);
    else if (this.absorbing === "line") stop = text.indexOf("\n");
    else {
      const end = PEM_END.exec(text);
      const other = text.search(NOT_PEM_BODY);
      stop = end && (other < 0 || end.index < other) ? end.index + end[0].length : other;
    }
    if (stop >= 0 || final) this.absorbing = undefined;
    // A private key's END line may be arriving in pieces: its start is kept to be found whole.
    this.drop(stop >= 0 ? stop : final || this.absorbing !== "pem" ? text.length : Math.max(0, text.length - 64));
  }

  private drop(n: number) {
    this.raw = this.raw.slice(n);
    this.base += n;
  }

  /** Redacts the first `cut` characters as one text and gives each piece its share. */
  private commit(cut: number) {
    if (cut <= 0) return;
    const text = this.raw.slice(0, cut);
    let i = 0;
    const put = (from: number, to: number) => {
      // Characters [from, to) of `text`, to the pieces they came from.
      for (let at = this.base + from, stop = this.base + to; at < stop;) {
        while (this.slots[i].end <= at) i++;
        const take = Math.min(this.slots[i].end, stop) - at;
        this.slots[i].out += text.slice(at - this.base, at - this.base + take);
        at += take;
      }
    };
    let at = 0;
    for (const s of findSecrets(text)) {
      put(at, s.start);
      // A secret's stand-in goes with the piece it started in; its other pieces lose its text.
      while (this.slots[i].end <= this.base + s.start) i++;
      this.slots[i].out += s.replacement;
      at = s.end;
    }
    put(at, cut);
    this.drop(cut);
  }
}

/** One viewer subscription's redaction: events in, the viewer's events out (marked verbatim,
 *  so the answer's own redaction leaves them). */
export class ViewerRedaction {
  private queue: Slot[] = [];
  private head = 0;
  private streams = new Map<string, Stream>();

  push(ev: SessionEvent): SessionEvent[] {
    const key = streamKey(ev);
    for (const [k, stream] of this.streams) {
      if (k !== key && ends(ev, k)) this.end(k, stream);
    }
    const slot: Slot = { ev, end: 0, out: "" };
    this.queue.push(slot);
    if (key) {
      let stream = this.streams.get(key);
      if (!stream) this.streams.set(key, (stream = new Stream()));
      slot.stream = stream;
      stream.add(slot, pieceText(ev as Piece));
      stream.settle(false);
    }
    if (this.queue.length - this.head > MAX_WAITING) {
      const blocking = this.queue[this.head].stream;
      for (const [k, stream] of this.streams) if (stream === blocking) this.end(k, stream);
    }
    return this.drain();
  }

  /** The source ended: every held tail goes out. */
  finish(): SessionEvent[] {
    for (const [k, stream] of this.streams) this.end(k, stream);
    return this.drain();
  }

  private end(key: string, stream: Stream) {
    stream.settle(true);
    this.streams.delete(key);
  }

  private drain(): SessionEvent[] {
    const out: SessionEvent[] = [];
    while (this.head < this.queue.length) {
      const slot = this.queue[this.head];
      if (slot.stream && slot.end > slot.stream.base) break;
      this.head++;
      out.push(slot.stream ? viewerPiece(slot.ev as Piece, slot.out) : verbatim(redactDeep(slot.ev)));
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return out;
  }
}

function viewerPiece(ev: Piece, text: string): SessionEvent {
  const copy = Object.assign({}, ev);
  if (copy.type === "tool.progress") copy.chunk = text;
  else copy.text = text;
  return verbatim(copy);
}

/** A list of stored events (a history window) as a viewer reads it. */
export function redactEventList(events: SessionEvent[]): SessionEvent[] {
  const r = new ViewerRedaction();
  return [...events.flatMap((ev) => r.push(ev)), ...r.finish()];
}

/**
 * A viewer's subscription: `source` redacted joined. Events with seq ≤ `skipThrough` are read
 * for their text but not handed out (a resume starts reading earlier, where no stream was open).
 */
export function redactedEvents(
  source: AsyncIterator<SessionEvent>,
  skipThrough = 0,
): AsyncIterableIterator<SessionEvent> {
  const redaction = new ViewerRedaction();
  let ready: SessionEvent[] = [];
  let at = 0;
  let done = false;
  const take = (events: SessionEvent[]) => {
    ready = skipThrough > 0 ? events.filter((e) => e.seq > skipThrough) : events;
    at = 0;
  };
  const it: AsyncIterableIterator<SessionEvent> = {
    [Symbol.asyncIterator]: () => it,
    async next() {
      for (;;) {
        if (at < ready.length) return { done: false, value: ready[at++] };
        if (done) return { done: true, value: undefined };
        const r = await source.next();
        if (r.done) {
          done = true;
          take(redaction.finish());
        } else take(redaction.push(r.value));
      }
    },
    async return() {
      done = true;
      ready = [];
      await source.return?.();
      return { done: true, value: undefined };
    },
  };
  return it;
}

/** `text[from, to)` as a viewer reads it, redacted with the text around it (a page of a long
 *  output: a key across the page's edge is still caught). A secret begun before `from` shows
 *  as its stand-in at the page's start. */
export function redactRange(text: string, from: number, to: number): string {
  let out = "";
  let at = from;
  for (const s of findSecrets(text)) {
    if (s.end <= at || s.start >= to) continue;
    out += text.slice(at, Math.max(at, s.start)) + (s.start >= from ? s.replacement : REDACTED);
    at = Math.min(to, s.end);
  }
  return out + text.slice(at, to);
}
