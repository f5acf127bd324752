// The rows a model turn writes and reads on its hot path (Turn, its Message rows, ModelRequest,
// the session's status), written through the database driver instead of Prisma. Prisma 6.19
// compiles each query in WebAssembly: a turn's eight queries cost 12–18 ms of CPU, more than
// the 120 tokens of a short reply cost to relay. The same rows in the same column forms Prisma
// writes and reads (dates as ISO text with +00:00 on SQLite, timestamp(3) UTC on PostgreSQL,
// Json as text / jsonb), so every other reader keeps using Prisma.
// The server runs them on its query thread (query-thread.ts), but for a tool call's rows, which run
// in its main thread (calls-here.ts); tests may run them all in-process.
import type { SessionEvent, Usage } from "../../protocol/events";
import type { ImageRef } from "../../protocol/attachments";
import { providerOf } from "../driver";
import type { CallRows } from "./calls";
import { postgresTurnRows } from "./postgres";
import { sqliteTurnRows } from "./sqlite";

export interface TurnBegin {
  sessionId: string;
  /** Set for a caller bound to an org: a session of another org is not found. */
  orgId?: string;
  /** The server instance that runs the turn (start-up recovery leaves a live one's alone). */
  instanceId?: string;
  text: string;
  /** Images of the message, in order: new ones are stored with it; a reused one must already
   *  be an attachment of this session. */
  images?: BeginImage[];
}

export type BeginImage = { id: string; mediaType: string; bytes: Uint8Array; sha256: string } | { reuse: string };

export type TurnBegun =
  | {
      ok: true;
      turnId: string;
      messageId: string;
      position: number;
      provider: string | null;
      model: string | null;
      images: ImageRef[];
    }
  | { ok: false; reason: "not_found" | "busy" }
  | { ok: false; reason: "no_attachment"; id: string };

/** What the user's message row holds: its text (if any), then a reference block per image. */
export function userContent(text: string, images: ImageRef[]): object[] {
  return [
    ...(text ? [{ type: "text", text }] : []),
    ...images.map((i) => ({ type: "image", attachmentId: i.id, mediaType: i.mediaType })),
  ];
}

export interface TurnEnd {
  turnId: string;
  sessionId: string;
  /** The instance ending it, as begun (none: a lone server). Another instance's turn is left alone. */
  instanceId?: string;
  status: string;
  stopReason: string | null;
  error: string | null;
  usage: Usage;
  sessionStatus: string;
}

export interface NewMessage {
  sessionId: string;
  turnId: string;
  position: number;
  role: string;
  content: unknown;
}

/** Also a turn's tool call rows (calls.ts). */
export interface TurnRows extends CallRows {
  /** One transaction: checks the session exists (in the org) and runs no turn, then stores the
   *  running turn, the user's message after the last one, and the session's running status. */
  begin(b: TurnBegin): Promise<TurnBegun>;
  /** The bytes (base64) of the session's attachments among `ids`; ids not found are left out. */
  images(sessionId: string, ids: string[]): Promise<{ id: string; mediaType: string; base64: string }[]>;
  /** The session's messages in order, less those of rewound turns (Turn.rewindId set). */
  conversation(sessionId: string): Promise<{ role: string; content: unknown }[]>;
  /** A ModelRequest row for one attempt; returns its id. */
  openRequest(r: { turnId: string; provider: string; model: string; attempt: number }): Promise<string>;
  closeRequest(id: string, r: { stopReason: string | null; error: string | null; usage: Usage }): Promise<void>;
  /** Returns the new message's id. */
  addMessage(m: NewMessage): Promise<string>;
  setMessageContent(id: string, content: unknown): Promise<void>;
  /** The turn's usage so far (a turn that goes on after tool calls). */
  turnUsage(turnId: string, usage: Usage): Promise<void>;
  /** The turn's end and the session's status after it, together; false, and nothing written,
   *  when the turn is no longer `instanceId`'s (a peer took it over as gone and recovered it). */
  end(e: TurnEnd): Promise<boolean>;
  /** Up to `limit` stored events of the session with afterSeq < seq ≤ upToSeq, in order: the
   *  pages a replay reads (hub/), 98,000 rows in 0.2 s where Prisma took 0.8–1.8 s. */
  events(sessionId: string, afterSeq: number, upToSeq: number, limit: number): Promise<SessionEvent[]>;
  /** Plain SQL sent as Prisma's $queryRawUnsafe (the session's access row, its mode, a lease of
   *  seqs: a few every turn), run here instead: Prisma's raw path cost the query thread about
   *  0.3 ms of CPU a call, the driver a tenth of that. Rows come as the driver gives them. */
  query(sql: string, args: unknown[]): Promise<unknown[]>;
  /** As query, for $executeRawUnsafe: the number of rows changed. */
  execute(sql: string, args: unknown[]): Promise<number>;
  close(): Promise<void>;
}

/** A reused image the session does not have: thrown inside `begin`'s transaction to undo it. */
export class NoAttachment extends Error {
  constructor(readonly id: string) {
    super(`No image ${id} in this session.`);
  }
}

export type TurnRowsOp = Exclude<keyof TurnRows, "close">;

/** Turn rows in this thread for a database URL (`file:…` or `postgresql://…`). */
export const turnRowsFor = (url: string): TurnRows =>
  providerOf(url) === "postgresql" ? postgresTurnRows(url) : sqliteTurnRows(url);
