// Finding what a command started by its marker: the marker counts as a whole variable of a
// process's environment, never inside another variable's value (where any process could put it).
import { spawn, type ChildProcess } from "node:child_process";
import { afterAll, expect, it } from "vitest";
import { findMarked, MARKER_VAR, newMarker } from "./kill";

const children: ChildProcess[] = [];
afterAll(() => children.forEach((c) => c.kill("SIGKILL")));

const sleeper = (env: Record<string, string>) => {
  const base = { NODE_ENV: "test" as const, PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const child = spawn("sleep", ["30"], { env: { ...base, ...env }, stdio: "ignore" });
  children.push(child);
  return child.pid!;
};

it("finds a process by its marker variable, not by the marker's text in another variable", async () => {
  const marker = newMarker();
  const marked = sleeper({ [MARKER_VAR]: marker });
  const first = sleeper({ [MARKER_VAR]: marker, OTHER: "x" });
  const posing = sleeper({ UNRELATED: `junk${MARKER_VAR}=${marker}` });
  await new Promise((r) => setTimeout(r, 200)); // their environments are set once exec'd
  const found = await findMarked(marker);
  expect(found).toEqual(expect.arrayContaining([marked, first]));
  expect(found).not.toContain(posing);
});
