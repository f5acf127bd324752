// A runner's handshake on /runner, after its token was taken: the hello, checked against that
// token (identity.ts) and, for a runner of the shared token when the pool keeps keys
// (key-store.ts), a proof of the key the hello names: the server sends a challenge made for this
// connection only, the runner signs it with the id and key, and the id must be bound to that key
// or to none yet. A signature from another connection, or by another key, proves nothing.
import { createPublicKey, randomBytes, verify } from "node:crypto";
import type { RawData, WebSocket } from "ws";
import {
  decodeFrame,
  RUNNER_PROTOCOL_VERSION,
  RunnerHello,
  runnerProofMessage,
  RunnerToServer,
  type ServerToRunner,
} from "../../protocol/runner";
import type { IdentityRefusal } from "./identity";
import type { RunnerKeyStore } from "./key-store";

export interface HandshakeOptions {
  helloTimeoutMs: number;
  /** Why the hello's id is refused for the token presented. */
  identityRefusal(runnerId: string, tokenIndex: number): IdentityRefusal | undefined;
  /** The token is bound to one id (the local runner's, QUIVER_RUNNER_TOKENS'): no key is asked. */
  bound(tokenIndex: number): boolean;
  keys?: RunnerKeyStore;
  log(line: string): void;
}

/** Frames a runner may send between its hello and its acceptance (a change event): kept for the connection. */
const MAX_EARLY_FRAMES = 256;

/** Whether `signature` is `publicKey`'s over this connection's `nonce`, `runnerId` and key. */
export function verifyProof(nonce: string, runnerId: string, publicKey: string, signature: string): boolean {
  // One key, one spelling: a non-canonical base64url of the same bytes would be another binding.
  if (Buffer.from(publicKey, "base64url").toString("base64url") !== publicKey) return false;
  try {
    const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: publicKey }, format: "jwk" });
    return verify(null, runnerProofMessage(nonce, runnerId, publicKey), key, Buffer.from(signature, "base64url"));
  } catch {
    return false;
  }
}

/**
 * Runs the handshake on `ws`; `accept` gets the hello once it is taken (and the frames sent
 * after it, to hand on). Refusals close the socket with 4002 (not a hello, or a hello twice),
 * 4003 (protocol) or 4005 (the id is not this runner's), and are logged.
 */
export function handshake(
  ws: WebSocket,
  tokenIndex: number,
  o: HandshakeOptions,
  accept: (hello: RunnerHello, early: RawData[]) => void,
): void {
  let hello: RunnerHello | undefined;
  let nonce: string | undefined;
  let checking = false;
  const early: RawData[] = [];
  const timer = setTimeout(() => refuse(4001, "no hello"), o.helloTimeoutMs);
  const finish = () => {
    clearTimeout(timer);
    ws.off("message", onMessage);
    ws.off("close", finish);
  };
  const refuse = (code: number, reason: string) => {
    finish();
    ws.close(code, reason);
  };
  const refuseId = (runnerId: string, why: IdentityRefusal) => {
    o.log(`runner id ${JSON.stringify(runnerId)} refused: ${why.log}`);
    refuse(4005, why.runner);
  };
  const taken = (h: RunnerHello) => {
    finish();
    accept(h, early);
  };

  function onHello(data: RawData): void {
    const decoded = decodeFrame(RunnerHello, data);
    if (!decoded.ok) return refuse(4002, "first frame must be hello");
    const h = decoded.message;
    if (h.protocol !== RUNNER_PROTOCOL_VERSION)
      return refuse(4003, `protocol ${h.protocol} not supported (server speaks ${RUNNER_PROTOCOL_VERSION})`);
    // Another runner's id would be its workspaces, its sessions' calls and their git tokens.
    const refusal = o.identityRefusal(h.runnerId, tokenIndex);
    if (refusal) return refuseId(h.runnerId, refusal);
    if (!o.keys || o.bound(tokenIndex)) return taken(h);
    // An older runner cannot prove which runner it is: taking its id unproven would leave that
    // id (and every id not yet bound) to any holder of the shared token.
    if (!h.publicKey)
      return refuseId(h.runnerId, {
        log: "it sent no key (a runner older than this server): upgrade it, or give it a token of its own in QUIVER_RUNNER_TOKENS",
        runner: "upgrade this runner: the server binds runner ids to runner keys",
      });
    hello = h;
    nonce = randomBytes(32).toString("base64url");
    ws.send(JSON.stringify({ type: "challenge", nonce } satisfies ServerToRunner));
  }

  function onProof(h: RunnerHello & { publicKey: string }, signature: string): void {
    const n = nonce!;
    // Single use: whatever follows on this connection cannot answer it again.
    nonce = undefined;
    if (!verifyProof(n, h.runnerId, h.publicKey, signature))
      return refuseId(h.runnerId, {
        log: "its proof is not a signature of this connection's challenge by the key it sent",
        runner: "the proof does not match this runner's key",
      });
    checking = true;
    o.keys!.claim(h.runnerId, h.publicKey).then(
      (claim) => {
        if (ws.readyState !== ws.OPEN) return finish();
        if (!claim.ok) return refuseId(h.runnerId, claim);
        if (claim.first) o.log(`runner id ${JSON.stringify(h.runnerId)} bound to the key it first connected with`);
        taken(h);
      },
      (err: Error) => {
        o.log(`runner id ${JSON.stringify(h.runnerId)}: its key could not be checked: ${err.message}`);
        refuse(1011, "the server could not check this runner's key");
      },
    );
  }

  function onMessage(data: RawData): void {
    if (!hello) return onHello(data);
    const decoded = decodeFrame(RunnerToServer, data);
    if (!decoded.ok) return refuse(4002, decoded.error.slice(0, 100));
    const msg = decoded.message;
    if (msg.type === "hello") return refuse(4002, "hello twice");
    if (msg.type === "proof") {
      if (!nonce || checking) return refuse(4002, "proof twice");
      return onProof(hello as RunnerHello & { publicKey: string }, msg.signature);
    }
    if (early.length >= MAX_EARLY_FRAMES) return refuse(4002, "too many frames before the proof");
    early.push(data);
  }

  ws.on("message", onMessage);
  ws.once("close", finish);
}
