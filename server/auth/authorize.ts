// The one place that decides whether someone may do a thing to a resource. Every tRPC procedure
// (server/api/trpc.ts: every procedure kind starts with it), every socket (the /api/trpc
// WebSocket per call, terminals, preview hosts) and the services that double-check (approvals)
// ask authorize(); nothing else compares roles or owners.
//
// The rules:
// - a session is its creator's: only they change it, talk to its agent, answer its approval
//   cards, make share links of it, open its terminals and previews;
// - the org's owners and admins may open any session of their org read-only (and see its
//   pending cards and link list, and revoke a link, as before), never act in it;
// - a share-link viewer reads exactly its session (redacted, by the caller), nothing else;
// - policies are read by the org's members and set by its owners and admins; the org's own
//   management (members, invitations, sign-in settings, audit, runners) is for owners and admins;
// - a resource of another org is answered as missing (it reveals nothing); a missing one too;
// - nobody signed in, a revoked device, an ended link, a removed member: refused with why.
// The decision is pure (resources come resolved: authorize-resources.ts loads them by id).
import { TRPCError } from "@trpc/server";
import type { Actor } from "../services/types";

export type Subject =
  | { kind: "person"; actor: Actor }
  | { kind: "viewer"; sessionId: string; linkId: string }
  /** Nobody that may act: `why` says which (anonymous and revoked devices must sign in again;
   *  an ended link or a person no longer a member of the org is forbidden). */
  | { kind: "nobody"; why: "anonymous" | "revoked-device" | "ended-link" | "removed-member"; message: string };

export type Action =
  /** Anyone at all (liveness, "who am I"). */
  | "public"
  /** A signed-in person's own account, in whatever org (sessions list, switching org). */
  | "account.use"
  /** Working in the org: create and list one's sessions, read the model choices, read policy. */
  | "org.use"
  | "policy.read"
  /** The org's management: policy versions, members, invitations, sign-in settings, runners, audit. */
  | "policy.write"
  | "org.admin"
  | "audit.read"
  /** A session: read (viewers too), inspect (members only: raw bytes, cards, link list), write. */
  | "session.read"
  | "session.inspect"
  | "session.write"
  | "approval.answer"
  | "share.create"
  | "share.revoke"
  | "terminal.open"
  | "preview.open";

/** A resource, resolved: the org it is in, and for a session-bound one the session and its creator. */
export type Resource =
  | { kind: "none" }
  | { kind: "org"; orgId: string }
  | { kind: "session"; sessionId: string; orgId: string; creatorId: string }
  /** Looked up by id and not there (or not readable): answered as NOT_FOUND with `message`. */
  | { kind: "missing"; message: string };

export interface Grant {
  /** The person acting, if a person. */
  actor: Actor | null;
  /** A share-link viewer: the caller redacts what it answers. */
  viewer: { sessionId: string; linkId: string } | null;
  /** An admin reading someone else's session: may look, not act. */
  readOnly: boolean;
}

export const VIEWER_REFUSED = "A read-only share link cannot do this.";
export const OTHER_SESSION = "This share link is for another session.";
export const ADMINS_ONLY = "Only the org's owners and admins can do this.";
export const CREATOR_ONLY = "Only the person who created this session can do this; the org's admins may only read it.";
export const NOT_YOURS = "This session is another member's: only its creator and the org's admins can open it.";

const VIEWER_ACTIONS = new Set<Action>(["public", "session.read"]);
const SESSION_ACTIONS = new Set<Action>([
  "session.read",
  "session.inspect",
  "session.write",
  "approval.answer",
  "share.create",
  "share.revoke",
  "terminal.open",
  "preview.open",
]);
const CREATOR_ACTIONS = new Set<Action>([
  "session.write",
  "approval.answer",
  "share.create",
  "terminal.open",
  "preview.open",
]);
const ADMIN_ACTIONS = new Set<Action>(["policy.write", "org.admin", "audit.read"]);

const refuse = (code: "UNAUTHORIZED" | "FORBIDDEN" | "NOT_FOUND" | "INTERNAL_SERVER_ERROR", message: string): never => {
  throw new TRPCError({ code, message });
};

/** Refused subjects: the code their `why` calls for. */
export function refusalCode(why: Extract<Subject, { kind: "nobody" }>["why"]): "UNAUTHORIZED" | "FORBIDDEN" {
  return why === "anonymous" || why === "revoked-device" ? "UNAUTHORIZED" : "FORBIDDEN";
}

/**
 * Refuses, before the input is read, a subject whatever the resource: nobody, and a viewer asking
 * for an action no link grants. A caller's input can be large (a save, images): a link's holder
 * (anyone it was sent to) must not get the server to buffer a body only to be told no.
 */
export function refuseBeforeInput(subject: Subject, action: Action): void {
  if (action === "public") return;
  if (subject.kind === "nobody") refuse(refusalCode(subject.why), subject.message);
  if (subject.kind === "viewer" && !VIEWER_ACTIONS.has(action)) refuse("FORBIDDEN", VIEWER_REFUSED);
}

/** Throws the TRPCError the subject gets, or answers what it may do. */
export function authorize(subject: Subject, action: Action, resource: Resource): Grant {
  if (action === "public") {
    return {
      actor: subject.kind === "person" ? subject.actor : null,
      viewer: subject.kind === "viewer" ? subject : null,
      readOnly: false,
    };
  }
  if (subject.kind === "nobody") return refuse(refusalCode(subject.why), subject.message);
  if (SESSION_ACTIONS.has(action) !== (resource.kind === "session" || resource.kind === "missing")) {
    return refuse("INTERNAL_SERVER_ERROR", `authorize: ${action} needs a session, not ${resource.kind}`);
  }

  if (subject.kind === "viewer") {
    if (!VIEWER_ACTIONS.has(action)) return refuse("FORBIDDEN", VIEWER_REFUSED);
    // A link is checked live when the viewer is identified; a session gone is an ended link.
    if (resource.kind !== "session" || resource.sessionId !== subject.sessionId)
      return refuse("FORBIDDEN", OTHER_SESSION);
    return { actor: null, viewer: { sessionId: subject.sessionId, linkId: subject.linkId }, readOnly: true };
  }

  const actor = subject.actor;
  const grant = (readOnly = false): Grant => ({ actor, viewer: null, readOnly });
  if (action === "account.use") return grant();
  if (resource.kind === "missing") return refuse("NOT_FOUND", resource.message);
  if (resource.kind === "none") return refuse("INTERNAL_SERVER_ERROR", `authorize: ${action} needs a resource`);
  const isAdmin = actor.role === "owner" || actor.role === "admin";

  if (resource.kind === "session") {
    // Another org's session is not there, as far as this person can tell.
    if (resource.orgId !== actor.orgId) return refuse("NOT_FOUND", `No session ${resource.sessionId}.`);
    const creator = resource.creatorId === actor.userId;
    if (creator) return grant();
    if (CREATOR_ACTIONS.has(action)) return refuse("FORBIDDEN", isAdmin ? CREATOR_ONLY : NOT_YOURS);
    return isAdmin ? grant(true) : refuse("FORBIDDEN", NOT_YOURS);
  }

  if (resource.orgId !== actor.orgId)
    return refuse("FORBIDDEN", "This belongs to another organization than the one you are working in.");
  if (ADMIN_ACTIONS.has(action) && !isAdmin) return refuse("FORBIDDEN", ADMINS_ONLY);
  return grant();
}
