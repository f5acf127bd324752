// Adds up vitest's and Playwright's JSON reports into one closing line: "N passed, N failed".
// The failures are named just above that line, with the first lines of their errors, so that a
// log cut to its tail still says what failed.
import { existsSync, readFileSync } from "node:fs";
import { relative } from "node:path";

let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
const [vitestFile, playwrightFile] = process.argv.slice(2);

const firstLines = (text, n = 6) =>
  String(text ?? "")
    .split("\n")
    .slice(0, n)
    .map((line) => `      ${line.slice(0, 300)}`)
    .join("\n");

if (existsSync(vitestFile)) {
  const r = JSON.parse(readFileSync(vitestFile, "utf8"));
  passed += r.numPassedTests;
  // A failed test's describe block and file count as failed suites too: only a file that failed
  // with no failed test (it did not load, a hook threw) adds to the tests.
  failed += r.numFailedTests;
  skipped += r.numPendingTests + (r.numTodoTests ?? 0);
  for (const file of r.testResults ?? []) {
    const name = relative(process.cwd(), file.name);
    const failedTests = (file.assertionResults ?? []).filter((t) => t.status === "failed");
    for (const t of failedTests) failures.push(`${name} › ${t.fullName}\n${firstLines(t.failureMessages?.join("\n"))}`);
    if (file.status === "failed" && failedTests.length === 0) {
      failed += 1;
      failures.push(`${name} (the file)\n${firstLines(file.message)}`);
    }
  }
} else {
  failed += 1;
  failures.push(`no vitest report at ${vitestFile}`);
}

const playwrightFailures = (suite, path) => {
  for (const spec of suite.specs ?? []) {
    for (const test of spec.tests ?? []) {
      if (test.status !== "unexpected") continue;
      const error = test.results?.at(-1)?.error?.message;
      failures.push(`${spec.file ?? path} › ${spec.title}\n${firstLines(error)}`);
    }
  }
  for (const child of suite.suites ?? []) playwrightFailures(child, suite.file ?? path);
};

if (existsSync(playwrightFile)) {
  const report = JSON.parse(readFileSync(playwrightFile, "utf8"));
  const s = report.stats;
  passed += s.expected + s.flaky;
  failed += s.unexpected;
  skipped += s.skipped;
  for (const suite of report.suites ?? []) playwrightFailures(suite, suite.file);
} else {
  failed += 1;
  failures.push(`no Playwright report at ${playwrightFile}`);
}

if (failures.length > 0) console.log(`Failed:\n${failures.map((f) => `  ✗ ${f}`).join("\n")}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
