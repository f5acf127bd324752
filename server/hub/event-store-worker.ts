// Worker thread that writes SessionEvent rows for the hub (event-store.ts starts it): the
// server's main thread, which carries the tokens, then pays one postMessage per batch and none
// of the driver's per-row work. With several instances on PostgreSQL it also NOTIFYs each batch
// in the transaction that stores it (event-rows.ts).
import { parentPort, workerData } from "node:worker_threads";
import { yieldToMainThread } from "../priority";
import { providerOf } from "../db/driver";
import { databaseFault } from "../db/faults";
import { postgresEventRows, sqliteEventRows } from "./event-rows";
import type { StoreReply, StoreRequest } from "./event-store";

const { url } = workerData as { url: string };
yieldToMainThread();
const rows = providerOf(url) === "postgresql" ? postgresEventRows(url) : sqliteEventRows(url);
const port = parentPort!;
port.on("message", (req: StoreRequest) => {
  if (req.type === "close") {
    void rows.close().finally(() => port.close());
    return;
  }
  const work =
    req.type === "notify"
      ? (rows.notify?.(req.channel, req.payloads) ?? Promise.resolve())
      : rows.insert(req.events, req.notifyFrom);
  work.then(
    () => port.postMessage({ id: req.id, ok: true } satisfies StoreReply),
    (err: unknown) => {
      const fault = databaseFault(err, url);
      const reply: StoreReply = fault
        ? { id: req.id, ok: false, message: fault.message, fault: { code: fault.code, detail: fault.detail } }
        : { id: req.id, ok: false, message: (err as Error).message ?? String(err) };
      port.postMessage(reply);
    },
  );
});
