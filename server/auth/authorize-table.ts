// The format of the access declarations: every tRPC procedure states, in a file beside its
// router (`server/api/routers/<router>.access.ts`), what each kind of person gets when they call
// it. The table test (server/api/access-table.test.ts) enumerates the procedures from appRouter
// itself and calls each one as each subject, over HTTP and over the WebSocket, against a real
// server; a procedure without a row fails it, and so does a cell the server answers otherwise.
//
// Subjects (the test signs each in for real):
//   owner        the org's owner, who also created the resources under test (the session, its
//                share link, its approval card)
//   admin        an admin of the same org (did not create them)
//   member       a member of the same org (did not create them)
//   otherOrg     the owner of another org: every privilege, in the wrong org
//   viewer       a share-link viewer of the session under test
//   otherViewer  a share-link viewer of another session of the same org (optional in a row:
//                FORBIDDEN unless said otherwise)
//   revoked      a person whose device (sign-in) was revoked
//   anonymous    nobody signed in
// Outcomes: "allow" (the call passes authorization: it may still fail for its own reasons,
// e.g. BAD_REQUEST, no runner, an unknown image), or the error code it must get. "NOT_FOUND" is
// a refusal that reveals nothing: another org's session is answered as a missing one (the test
// checks the message says so: "No session <id>.").
//
// Adding a router: register it in root.ts as usual under key `<key>`, and write
// `server/api/routers/<key>.access.ts` whose default export is `defineAccess(yourRouter, { proc:
// row, … })` (the types make you give every procedure a row; the test finds the file by its
// name). A row is a preset (below) or your own cells, plus an `input` that reaches the access
// decision (built anew for each cell from the fixture; it may create rows through `fx.db`).
import type { AnyRouter } from "@trpc/server";
import type { Db } from "../db";

export type SubjectName =
  "owner" | "admin" | "member" | "otherOrg" | "viewer" | "otherViewer" | "revoked" | "anonymous";
export const SUBJECTS: readonly SubjectName[] = [
  "owner",
  "admin",
  "member",
  "otherOrg",
  "viewer",
  "otherViewer",
  "revoked",
  "anonymous",
];

export type Outcome = "allow" | "FORBIDDEN" | "UNAUTHORIZED" | "NOT_FOUND";
export type Cells = Record<Exclude<SubjectName, "otherViewer">, Outcome> & { otherViewer?: Outcome };

/** What the table test sets up before any call; an `input` builds a procedure's input from it. */
export interface AccessFixture {
  db: Db;
  /** The org under test (owner, admin, member) and the other subject's org. */
  orgId: string;
  otherOrgId: string;
  /** User ids per signed-in subject. */
  users: Record<"owner" | "admin" | "member" | "otherOrg", string>;
  /** The owner's session under test; the viewer's link is for it. */
  sessionId: string;
  /** Another session of the owner's, in the same org (the otherViewer's). */
  otherSessionId: string;
  /** A live share link of `sessionId`. */
  linkId: string;
  /** A pending approval card on `sessionId`. */
  approvalId: string;
  /** Fresh resources of the owner's, for calls that use theirs up (delete, revoke, answer):
   *  an `input` is built anew for every cell. */
  newSession(): Promise<string>;
  newShareLink(sessionId?: string): Promise<string>;
  newApproval(sessionId?: string): Promise<string>;
  /** A fresh suffix for names that must be unique. */
  unique(): string;
}

export interface AccessRow {
  expect: Cells;
  /** The procedure's input, built for each cell; default: defaultInput (the fields most
   *  procedures take). */
  input?: (fx: AccessFixture) => unknown;
  /** Why these cells, in a few words (the README's access column). */
  note?: string;
}

/** An input most procedures accept, so the access check (not input parsing) decides. */
export function defaultInput(fx: Pick<AccessFixture, "sessionId" | "linkId" | "approvalId">): Record<string, unknown> {
  return {
    sessionId: fx.sessionId,
    id: fx.sessionId,
    linkId: fx.linkId,
    approvalId: fx.approvalId,
    choice: "reject",
    path: "a.txt",
    text: "hi",
    content: "x",
    kind: "file",
    from: "a.txt",
    to: "b.txt",
    query: "needle",
    title: "t",
    ref: `sp_${"0".repeat(32)}`,
    offset: 0,
    length: 10,
    rules: [],
    lastSeq: 0,
    turns: 40,
    beforeSeq: 1,
    message: "m",
    replacement: "r",
    paths: ["a.txt"],
    base64: "eA==",
  };
}

const signedOut = { revoked: "UNAUTHORIZED", anonymous: "UNAUTHORIZED" } as const;

/** Presets: the common shapes. Spread one and override a cell: `{ ...SESSION_READ, viewer: "FORBIDDEN" }`. */
export const PUBLIC: Cells = {
  owner: "allow",
  admin: "allow",
  member: "allow",
  otherOrg: "allow",
  viewer: "allow",
  otherViewer: "allow",
  revoked: "allow",
  anonymous: "allow",
};
/** Any signed-in person, acting on their own account or their active org (no resource id). */
export const SIGNED_IN: Cells = {
  owner: "allow",
  admin: "allow",
  member: "allow",
  otherOrg: "allow",
  viewer: "FORBIDDEN",
  ...signedOut,
};
/** Owners and admins of their active org (otherOrg acts on its own org, so it is allowed). */
export const ORG_ADMINS: Cells = { ...SIGNED_IN, member: "FORBIDDEN" };
/** Owners and admins of the org the resource belongs to (an id in the input). */
export const ADMINS_OF_RESOURCE: Cells = { ...ORG_ADMINS, otherOrg: "FORBIDDEN" };
/** Reading a session: its creator, the org's admins and owners (read-only), its viewers. */
export const SESSION_READ: Cells = {
  owner: "allow",
  admin: "allow",
  member: "FORBIDDEN",
  otherOrg: "NOT_FOUND",
  viewer: "allow",
  otherViewer: "FORBIDDEN",
  ...signedOut,
};
/** As SESSION_READ, share-link viewers excluded (what cannot be redacted, link management). */
export const SESSION_READ_MEMBERS: Cells = { ...SESSION_READ, viewer: "FORBIDDEN" };
/** Changing a session or acting in it: its creator only. */
export const SESSION_WRITE: Cells = { ...SESSION_READ_MEMBERS, admin: "FORBIDDEN" };

/** Every procedure of `router` gets a row (a missing or misspelt one is a type error). */
export function defineAccess<R extends AnyRouter>(
  _router: R,
  rows: { [K in keyof R["_def"]["record"] & string]: AccessRow | Cells },
): Record<string, AccessRow> {
  const out: Record<string, AccessRow> = {};
  for (const [name, row] of Object.entries(rows as Record<string, AccessRow | Cells>))
    out[name] = "expect" in row ? (row as AccessRow) : { expect: row as Cells };
  return out;
}

/** A cell as the test reads it (otherViewer defaults to FORBIDDEN). */
export function cell(row: AccessRow, subject: SubjectName): Outcome {
  return subject === "otherViewer" ? (row.expect.otherViewer ?? "FORBIDDEN") : row.expect[subject];
}
