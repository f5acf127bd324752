// Whose requests and sockets these are, as one key for the bounds shared by all of them: a
// signed-in person's, the local owner's, a share link's, or else the address's.
import type { Identity } from "../auth";

export function callerKey(id: Identity, address: string): string {
  if (id.kind === "owner") return id.via === "account" ? `person:${id.actor.userId}` : "owner";
  if (id.kind === "viewer") return `link:${id.linkId}`;
  return `address:${address}`;
}
