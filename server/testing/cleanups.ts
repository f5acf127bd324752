// Test helper: what a test started, undone after it in reverse order (servers, sockets, folders),
// whether the test passed or threw.
import { afterEach } from "vitest";

export type Cleanups = Array<() => Promise<unknown> | void>;

/** A list to push undo steps on; after each test of the file they run, last first, and the list empties. */
export function cleanupsAfterEach(): Cleanups {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    for (const undo of cleanups.splice(0).reverse()) await undo();
  });
  return cleanups;
}
