// Which runner ids a runner token may say in its hello. A bound token (the local runner's per-start
// one, each QUIVER_RUNNER_TOKENS pair) says only its own id, and no other token may say that id or
// one that looks like it: the id is the runner's sessions, their calls and their git credentials.
import type { BoundToken } from "./auth";
import { looksAlike } from "./bound-tokens";

/** Why a hello's id is refused: in full for the server's log, shorter for the runner's close
 *  reason (a WebSocket close reason holds 123 bytes). */
export interface IdentityRefusal {
  log: string;
  runner: string;
}

/**
 * A check of (claimed id, index of the token presented) against `tokens`, the list tokenIndexer
 * indexes. Throws on a token listed twice or an id bound twice: tokenIndexer answers the first
 * match, so either would leave one binding unenforceable.
 */
export function identityCheck(
  tokens: readonly (string | BoundToken)[],
): (runnerId: string, tokenIndex: number) => IdentityRefusal | undefined {
  const boundIds = new Map<string, number>();
  const seen = new Set<string>();
  tokens.forEach((t, i) => {
    const token = typeof t === "string" ? t : t.token;
    if (seen.has(token)) throw new Error(`runner token ${i + 1} is listed twice`);
    seen.add(token);
    if (typeof t === "string") return;
    if (boundIds.has(t.runnerId)) throw new Error(`runner id ${JSON.stringify(t.runnerId)} is bound twice`);
    boundIds.set(t.runnerId, i);
  });
  return (runnerId, tokenIndex) => {
    const own = tokens[tokenIndex];
    if (own !== undefined && typeof own !== "string" && own.runnerId !== runnerId) {
      const log = `this token connects only as runner ${JSON.stringify(own.runnerId)}`;
      // Its holder may learn the id its own token is bound to: that is how it gets started right.
      return { log, runner: Buffer.byteLength(log) <= 123 ? log : "this token is bound to another runner id" };
    }
    const bound = boundIds.get(runnerId);
    if (bound !== undefined && bound !== tokenIndex)
      return { log: "it is bound to another token", runner: "this runner id is bound to another token" };
    // "GPU-1", "gpu-1 " or a Cyrillic "gрu-1" is another id and takes no session of "gpu-1";
    // refused all the same, so that no list of runners shows a bound runner's double.
    if (bound === undefined)
      for (const [id, i] of boundIds)
        if (i !== tokenIndex && looksAlike(id, runnerId))
          return {
            log: `it looks like runner id ${JSON.stringify(id)}, which is bound to another token`,
            runner: "this runner id looks like one bound to another token",
          };
    return undefined;
  };
}
