// The open browser sockets of signed-in people, so that signing a device out, removing a member
// or changing their role ends that person's sockets at once (as an ended share link ends its
// viewers' sockets). Each socket is registered at its upgrade with who opened it; `end` closes
// the ones that match here and tells the other server instances (`broadcast`), and a periodic
// re-check closes any whose device (AuthSession row) or membership (org and role) is gone or
// changed, whoever changed it and on whichever instance.
// The close is a WebSocket close frame written on the raw socket (every kind of browser socket
// is one: tRPC, terminal), then the socket is destroyed.
import type { Duplex } from "node:stream";
import type { Db } from "../../db";

export interface SocketOwner {
  authSessionId: string;
  userId: string;
  orgId: string;
  role: string;
}

/** Which sockets to end: a device, a person everywhere, or a person in one org. */
export type SocketMatch = { authSessionId: string } | { userId: string; orgId?: string };

/** WebSocket close code of a socket whose person was signed out or lost access (4000-4999: the application's). */
export const SIGNED_OUT_CLOSE = 4401;

export interface PeopleSocketsDeps {
  db: Db;
  /** Tells the other instances to re-check theirs (PostgreSQL's NOTIFY); none on SQLite. */
  broadcast?(): Promise<void>;
  recheckMs?: number;
  log?(line: string): void;
}

function closeFrame(code: number, reason: string): Buffer {
  const text = Buffer.from(reason.slice(0, 100), "utf8");
  return Buffer.concat([Buffer.from([0x88, 2 + text.length, code >> 8, code & 0xff]), text]);
}

/** How long `holds` keeps an answer: a removal reaches a preview's next requests within it. */
const HOLDS_MS = 5_000;

export function createPeopleSockets(deps: PeopleSocketsDeps) {
  const open = new Map<Duplex, SocketOwner>();
  const held = new Map<string, { at: number; answer: boolean }>();
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<void> | undefined;
  let again = false;

  function close(socket: Duplex, reason: string) {
    open.delete(socket);
    if (socket.destroyed) return;
    // Ending writes only, the socket would go on reading: a terminal typed into or a call sent in
    // the moment before the destroy below would reach the program reading it (ws) as the person
    // who just lost access. What arrives from now on is read and dropped (a paused socket would
    // keep it, and ws reads what is left when the socket closes).
    socket.removeAllListeners("data");
    socket.on("data", () => undefined);
    socket.end(closeFrame(SIGNED_OUT_CLOSE, reason));
    setTimeout(() => socket.destroy(), 250).unref();
  }

  const matches = (o: SocketOwner, m: SocketMatch) =>
    "authSessionId" in m
      ? o.authSessionId === m.authSessionId
      : o.userId === m.userId && (m.orgId === undefined || o.orgId === m.orgId);

  /** Closes the sockets whose device or membership no longer holds. */
  async function recheck(): Promise<void> {
    if (open.size === 0) return;
    const owners = [...open.entries()];
    const sessionIds = [...new Set(owners.map(([, o]) => o.authSessionId))];
    const userIds = [...new Set(owners.map(([, o]) => o.userId))];
    const [devices, memberships] = await Promise.all([
      deps.db.authSession.findMany({
        where: { id: { in: sessionIds }, expiresAt: { gt: new Date() } },
        select: { id: true },
      }),
      deps.db.membership.findMany({
        where: { userId: { in: userIds } },
        select: { userId: true, orgId: true, role: true },
      }),
    ]);
    const live = new Set(devices.map((d) => d.id));
    const roles = new Map(memberships.map((m) => [`${m.userId} ${m.orgId}`, m.role]));
    for (const [socket, o] of owners) {
      if (!open.has(socket)) continue;
      if (!live.has(o.authSessionId)) close(socket, "signed out");
      else if (roles.get(`${o.userId} ${o.orgId}`) !== o.role) close(socket, "access changed");
    }
  }

  /** One re-check at a time; a request during one runs another after it. */
  function recheckSoon(): Promise<void> {
    if (checking) {
      again = true;
      return checking;
    }
    checking = recheck()
      .catch((err) => deps.log?.(`signed-in sockets re-check failed: ${(err as Error).message}`))
      .finally(() => {
        checking = undefined;
        if (again) {
          again = false;
          void recheckSoon();
        }
      });
    return checking;
  }

  return {
    /** Registers a person's socket at its upgrade; it leaves the registry when it closes. */
    register(socket: Duplex, owner: SocketOwner): void {
      if (socket.destroyed) return;
      open.set(socket, owner);
      socket.once("close", () => open.delete(socket));
      if (!timer) {
        timer = setInterval(() => void recheckSoon(), deps.recheckMs ?? 5_000);
        timer.unref();
      }
    },
    /**
     * Ends the matching sockets on this instance at once, and on the others: call it after the
     * row change that ended their access is committed (device deleted, member removed, role changed).
     */
    async end(match: SocketMatch, reason = "signed out"): Promise<void> {
      for (const [socket, o] of [...open]) if (matches(o, match)) close(socket, reason);
      await deps
        .broadcast?.()
        .catch((err) => deps.log?.(`could not tell other instances to end sockets: ${(err as Error).message}`));
    },
    /** Devices or memberships changed in ways no match names (a password change signed others out): every instance re-checks. */
    async recheckEverywhere(): Promise<void> {
      await recheckSoon();
      await deps
        .broadcast?.()
        .catch((err) => deps.log?.(`could not tell other instances to re-check sockets: ${(err as Error).message}`));
    },
    /** Another instance changed people or devices: re-check this one's sockets now. */
    changed: () => recheckSoon(),
    /**
     * Whether this person's device and membership still hold as they were (what `recheck` asks of
     * a socket), for what is admitted without a socket: a preview host's cookie, on every request.
     * Answers are kept HOLDS_MS, as a page loads dozens of modules.
     */
    async holds(owner: SocketOwner): Promise<boolean> {
      const key = `${owner.authSessionId} ${owner.userId} ${owner.orgId} ${owner.role}`;
      const known = held.get(key);
      if (known && Date.now() - known.at < HOLDS_MS) return known.answer;
      const [device, membership] = await Promise.all([
        deps.db.authSession.findFirst({
          where: { id: owner.authSessionId, userId: owner.userId, expiresAt: { gt: new Date() } },
          select: { id: true },
        }),
        deps.db.membership.findFirst({
          where: { userId: owner.userId, orgId: owner.orgId },
          select: { role: true },
        }),
      ]);
      const answer = device !== null && membership?.role === owner.role;
      if (held.size > 10_000) held.clear();
      held.set(key, { at: Date.now(), answer });
      return answer;
    },
    /** Open sockets (tests, diagnostics). */
    size: () => open.size,
    dispose() {
      clearInterval(timer);
      timer = undefined;
      open.clear();
    },
  };
}

export type PeopleSockets = ReturnType<typeof createPeopleSockets>;
