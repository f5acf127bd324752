// Messages between server instances that share one PostgreSQL database, carried by LISTEN/NOTIFY
// (server/hub/cluster.ts). Two channels: EVENTS_CHANNEL carries numbered session events from
// the instance that published them (sent by its event writer in the transaction that stores
// them, so they arrive after the rows are readable and in commit order); CONTROL_CHANNEL
// carries requests and replies between instances. A NOTIFY payload holds at most 8000 bytes:
// a longer message is split into frames "~<id>:<index>:<count>:<slice>" that the receiver joins.
import { z } from "zod";
import { SessionEvent, SessionEventBody } from "./events";

export const EVENTS_CHANNEL = "quiver_events";
export const CONTROL_CHANNEL = "quiver_control";
/** Bytes per payload, under PostgreSQL's 8000 with room for the frame header. */
export const PAYLOAD_LIMIT = 7800;

const instance = z.string().regex(/^[a-z0-9]{8,40}$/);

export const EventsMessage = z.object({ from: instance, events: z.array(SessionEvent) });
export type EventsMessage = z.infer<typeof EventsMessage>;

export const ControlMessage = z.discriminatedUnion("type", [
  /** A new instance is listening: peers start notifying their events and answer `welcome`. */
  z.object({ type: z.literal("hello"), from: instance }),
  /** Sent through the peer's event writer, so every batch it stored without a NOTIFY is committed before. */
  z.object({ type: z.literal("welcome"), from: instance, to: instance }),
  /** To itself: once it arrives, every notification committed before it has arrived too. */
  z.object({ type: z.literal("sync"), from: instance, to: instance, id: z.number().int() }),
  /**
   * Publish these events of a session whose publisher is `to` (hub/shared.ts). `batch` numbers
   * the batch among the sender's: a batch sent again (no answer came) keeps its number, and the
   * publisher answers it with the first answer instead of storing it twice.
   */
  z.object({
    type: z.literal("publish"),
    from: instance,
    to: instance,
    id: z.number().int(),
    batch: z.number().int().nonnegative(),
    sessionId: z.string(),
    bodies: z.array(SessionEventBody),
  }),
  /** Cancel the turn of the session that runs on `to`. */
  z.object({ type: z.literal("cancel"), from: instance, to: instance, id: z.number().int(), sessionId: z.string() }),
  /** An approval was answered on `from`: the instance whose turn waits for it re-reads the row. */
  z.object({ type: z.literal("approval.answered"), from: instance, approvalId: z.string() }),
  /** A device was signed out or a membership changed on `from`: every instance re-checks its people's sockets (server/auth/accounts/sockets.ts). */
  z.object({ type: z.literal("people.changed"), from: instance }),
  z.object({
    type: z.literal("reply"),
    from: instance,
    to: instance,
    id: z.number().int(),
    ok: z.boolean(),
    /** publish: the numbers and times given to the bodies; cancel: whether a turn was running. */
    value: z.union([z.array(z.object({ seq: z.number().int(), at: z.string() })), z.boolean()]).optional(),
    code: z.enum(["not_owner", "failed"]).optional(),
    message: z.string().optional(),
  }),
]);
export type ControlMessage = z.infer<typeof ControlMessage>;

/** UTF-8 length without allocating (lone surrogates count as the 3 bytes of U+FFFD). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

let frameCounter = 0;

/** The payloads that carry `text`: itself when it fits, else frames cut between code points. */
export function framePayload(text: string, tag: string): string[] {
  if (text.length <= PAYLOAD_LIMIT / 3 || utf8Length(text) <= PAYLOAD_LIMIT) return [text];
  // At most 3 bytes per UTF-16 unit (a surrogate pair is 4 bytes for 2 units).
  const size = Math.floor(PAYLOAD_LIMIT / 3);
  const slices: string[] = [];
  for (let i = 0; i < text.length;) {
    let end = Math.min(i + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    slices.push(text.slice(i, end));
    i = end;
  }
  const id = `${tag}.${(frameCounter = (frameCounter + 1) % 1e9)}`;
  return slices.map((s, i) => `~${id}:${i}:${slices.length}:${s}`);
}

/** Packs events into as few messages as fit a payload each; a larger event gets frames. */
export function eventPayloads(from: string, events: SessionEvent[]): string[] {
  const out: string[] = [];
  const head = `{"from":${JSON.stringify(from)},"events":[`;
  let parts: string[] = [];
  let size = head.length + 2;
  const flush = () => {
    if (parts.length) out.push(`${head}${parts.join(",")}]}`);
    parts = [];
    size = head.length + 2;
  };
  for (const ev of events) {
    const json = JSON.stringify(ev);
    const bytes = utf8Length(json);
    if (size + bytes + 1 > PAYLOAD_LIMIT) flush();
    if (head.length + 2 + bytes > PAYLOAD_LIMIT) out.push(...framePayload(`${head}${json}]}`, `${from}e`));
    else {
      parts.push(json);
      size += bytes + 1;
    }
  }
  flush();
  return out;
}

/** Joins frames back into messages; a whole payload passes straight through. */
export class Reassembler {
  private partial = new Map<string, { parts: string[]; got: number; at: number }>();

  constructor(
    private maxPending = 256,
    private maxAgeMs = 60_000,
  ) {}

  push(payload: string, now = Date.now()): string | undefined {
    if (!payload.startsWith("~")) return payload;
    const m = /^~([^:]+):(\d+):(\d+):/.exec(payload);
    if (!m) return undefined;
    const [head, id, index, count] = [m[0], m[1], Number(m[2]), Number(m[3])];
    let p = this.partial.get(id);
    if (!p) {
      this.sweep(now);
      this.partial.set(id, (p = { parts: new Array<string>(count), got: 0, at: now }));
    }
    if (p.parts[index] === undefined) p.got++;
    p.parts[index] = payload.slice(head.length);
    if (p.got < count) return undefined;
    this.partial.delete(id);
    return p.parts.join("");
  }

  /** Frames whose rest never came (the sender died between them) are dropped. */
  private sweep(now: number) {
    for (const [id, p] of this.partial)
      if (now - p.at > this.maxAgeMs || this.partial.size >= this.maxPending) this.partial.delete(id);
  }
}
