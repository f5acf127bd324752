// Token-latency benchmark, server side (BENCH_VERBOSE): when each token passed three points of
// the server, to split the added latency. `arrived`: its bytes reached JavaScript from the
// provider's socket (everything before is the kernel and the wait for the event loop: queued
// work, GC, a CPU). `parsed`: the provider SDK parsed its SSE event (both SDKs JSON.parse each
// event's data; in between: undici, web streams, the SDK's decoder). `handedOver`: its event
// went to a client's socket (in between: the engine, the hub, tRPC). Diagnostics only: each
// stamp scans the bytes for token markers, which costs the server a little CPU.
import { Socket } from "node:net";
import { WebSocket } from "ws";
import { TOKEN } from "./ipc";

type Times = [string, number][];

export function stampTokens(measuring: () => boolean) {
  const arrived: Times = [];
  const parsed: Times = [];
  const handedOver: Times = [];
  const stamp = (out: Times, text: string) => {
    const now = Number(process.hrtime.bigint());
    for (const m of text.matchAll(TOKEN)) out.push([m[0], now]);
  };

  const push = Socket.prototype.push;
  Socket.prototype.push = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
    if (measuring() && chunk instanceof Buffer && chunk.length < 2000) stamp(arrived, chunk.toString("latin1"));
    return (push as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  };
  const parse = JSON.parse;
  JSON.parse = (text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    if (measuring() && typeof text === "string" && text.length < 400) stamp(parsed, text);
    return parse(text, reviver);
  };
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (this: WebSocket, data: unknown, ...rest: unknown[]) {
    if (measuring() && typeof data === "string") stamp(handedOver, data);
    return (send as (...a: unknown[]) => void).call(this, data, ...rest);
  } as typeof send;

  return { take: () => ({ arrived: arrived.splice(0), parsed: parsed.splice(0), handedOver: handedOver.splice(0) }) };
}
