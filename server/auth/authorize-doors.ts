// authorize() for the server's doors that are not tRPC procedures: the terminal socket, the
// preview hosts, the audit export. Each asks with the request's identity (server/auth, decided
// once per request) and the resource it opens, exactly as a procedure does. (tRPC over the
// WebSocket is decided per call by the procedures themselves.)
import type { IncomingMessage } from "node:http";
import { TRPCError } from "@trpc/server";
import type { Db } from "../db";
import type { Actor } from "../services/types";
import type { Identity } from "./identity";
import { LINK_MESSAGES, NO_ORG_TEXT, SIGN_IN_TEXT } from "./pages";
import { authorize, type Action, type Grant, type Subject } from "./authorize";
import { loadResource, type ResourceRef } from "./authorize-resources";

/** Who an identity is, as authorize() sees them. */
export function subjectOfIdentity(id: Identity): Subject {
  switch (id.kind) {
    case "owner":
      return { kind: "person", actor: id.actor };
    case "viewer":
      return { kind: "viewer", sessionId: id.sessionId, linkId: id.linkId };
    case "ended":
      return { kind: "nobody", why: "ended-link", message: LINK_MESSAGES[id.reason] };
    case "anonymous":
      return { kind: "nobody", why: "anonymous", message: SIGN_IN_TEXT };
    case "outsider":
      return { kind: "nobody", why: "removed-member", message: NO_ORG_TEXT };
  }
}

export type DoorAnswer = { ok: true; grant: Grant } | { ok: false; status: 401 | 403 | 404 | 500; message: string };

const STATUS = { UNAUTHORIZED: 401, FORBIDDEN: 403, NOT_FOUND: 404 } as const;

export function createDoors(deps: { db: Db; identify(req: IncomingMessage): Promise<Identity> }) {
  /** authorize() for a subject, as an answer instead of a throw. */
  async function decide(subject: Subject, action: Action, ref: ResourceRef): Promise<DoorAnswer> {
    try {
      return { ok: true, grant: authorize(subject, action, await loadResource(deps.db, subject, ref)) };
    } catch (err) {
      if (!(err instanceof TRPCError)) throw err;
      return { ok: false, status: STATUS[err.code as keyof typeof STATUS] ?? 500, message: err.message };
    }
  }
  return {
    decide,
    /** The request's person (or viewer, or nobody) doing `action` to `ref`. */
    request: async (req: IncomingMessage, action: Action, ref: ResourceRef) =>
      decide(subjectOfIdentity(await deps.identify(req)), action, ref),
    /** A person already identified (a socket decided at upgrade) opening one session's door. */
    person: async (actor: Actor, action: Action, sessionId: string) =>
      (await decide({ kind: "person", actor }, action, { kind: "session", id: sessionId })).ok,
  };
}

export type Doors = ReturnType<typeof createDoors>;
