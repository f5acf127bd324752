// Where checkpoints are taken, without the engine or the pipeline knowing of them: the executor
// picker the pipeline uses runs a turn's `before` checkpoint ahead of any call that may change
// files (not read-only, or a shell command: its analysis can be wrong and the checkpoint is what
// catches it), and the hub the engine publishes through tells the service when a turn starts
// and ends (its `after`, taken once turn.finished is out; the next turn's `before` waits for it).
import type { Executor } from "../executors/contract";
import type { EventHub } from "../hub/events";
import type { ExecutorPicker } from "../pipeline/contract";
import type { CheckpointService } from "./checkpoints";

export function checkpointingPicker(picker: ExecutorPicker, checkpoints: CheckpointService): ExecutorPicker {
  return {
    pick(tool, input, sessionId) {
      const executor = picker.pick(tool, input, sessionId);
      if (!executor || (tool.isReadOnly(input) && tool.name !== "shell")) return executor;
      const wrapped: Executor = {
        kind: executor.kind,
        available: (id) => executor.available(id),
        async run(request) {
          await checkpoints.beforeChange(request.sessionId);
          return executor.run(request);
        },
      };
      return wrapped;
    },
  };
}

/** `hub` as the engine should use it: every call goes to it; turn starts and ends are told to `checkpoints` too. */
export function checkpointingHub(hub: EventHub, checkpoints: CheckpointService, log: (m: string) => void): EventHub {
  return new Proxy(hub, {
    get(target, prop) {
      if (prop === "publish") {
        return (sessionId: string, body: Parameters<EventHub["publish"]>[1]) => {
          const published = target.publish(sessionId, body);
          if (body.type === "turn.started") checkpoints.turnStarted(sessionId, body.turnId);
          if (body.type === "turn.finished") {
            checkpoints
              .turnEnded(sessionId, body.turnId, published)
              .catch((err) => log(`checkpoint after turn ${body.turnId}: ${(err as Error).message}`));
          }
          return published;
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
