// `$'…'` words against real bash: where the analysis says it knows a word's value, it is the
// bytes bash passes, escape for escape; where bash's bytes depend on its locale or stop at a
// NUL, the word is left to run time.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { analyseShell } from "./analyse";
import { decodeAnsiC } from "./words";

/** The bytes bash passes as the argument `$'<body>'`, as hex. */
function bashBytes(body: string): string {
  const r = spawnSync("bash", ["-c", `printf '%s' $'${body}' | od -An -tx1`], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout.replace(/\s+/g, "");
}

const hex = (text: string) => Buffer.from(text, "latin1").toString("hex");

const ESCAPES = [
  ...["\\x41", "\\x4", "\\x41g", "\\x7f", "\\x", "\\101", "\\1011", "\\177", "\\8", "\\u41", "\\U00000041"],
  ...["\\ca", "\\cZ", "\\c[", "\\c?", "\\c1", "\\c\\\\", "\\c", "\\e", "\\E", "\\q", "\\'", '\\"', "\\?"],
  ...["\\a\\b\\f\\v\\t\\r\\n", "g\\x69t", "-r\\x66", "\\\\"],
];

describe("$'…' as bash decodes it", () => {
  it.each(ESCAPES)("%j", (body) => {
    expect(hex(decodeAnsiC(body))).toBe(bashBytes(body));
  });

  it("a word whose escapes stay ASCII is known: the command it names is seen", () => {
    const seen = analyseShell("$'\\x67\\151t' push $'-\\x66'");
    expect(seen.commands.map((c) => [c.argv, c.opaque])).toEqual([[["git", "push", "-f"], undefined]]);
  });

  it.each(["\\xc3\\xa9", "\\u00e9", "\\351", "\\0", "\\c@", "\\400"])(
    "%j makes a byte past ASCII or a NUL: the word is only known at run time",
    (escape) => {
      const words = analyseShell(`rm $'x${escape}'`).commands[0].words;
      expect(words[1].dynamic).toBe(true);
    },
  );
});
