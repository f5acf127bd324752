import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_BYTES, parseArguments, type Rung } from "./arguments";
import { REAL_CALLS, rawControlChars, realCallJson, surplusClosers, trailingCommas } from "./corpus";
import { isFaithfulPrefix } from "./fidelity";

describe("argument ladder rungs", () => {
  it.each<[string, string, Record<string, unknown>, Rung[]]>([
    ["strict parse", '{"path":"a.ts","limit":10}', { path: "a.ts", limit: 10 }, []],
    ["empty arguments", "", {}, []],
    ["whitespace arguments", "  \n", {}, []],
    ["raw newline in string", '{"content":"a\nb"}', { content: "a\nb" }, ["control_chars"]],
    ["raw tab and CR in string", '{"content":"a\tb\r\n"}', { content: "a\tb\r\n" }, ["control_chars"]],
    ["other raw control char is stripped", '{"content":"a\u0001b"}', { content: "ab" }, ["control_chars"]],
    ["trailing comma in object", '{"a":1,}', { a: 1 }, ["trailing_commas"]],
    ["trailing comma in array", '{"a":[1,2,]}', { a: [1, 2] }, ["trailing_commas"]],
    ["doubled comma", '{"a":1,,"b":2}', { a: 1, b: 2 }, ["trailing_commas"]],
    ["unclosed object", '{"a":1', { a: 1 }, ["closed_brackets"]],
    ["unclosed string", '{"a":"hello wor', { a: "hello wor" }, ["closed_brackets"]],
    ["unclosed nested", '{"a":[{"b":"c"', { a: [{ b: "c" }] }, ["closed_brackets"]],
    ["mismatched closer closes inner first", '{"a":[1,2}', { a: [1, 2] }, ["closed_brackets"]],
    ["cut literal completed", '{"a":tr', { a: true }, ["closed_brackets"]],
    ["cut null completed", '{"a":nu', { a: null }, ["closed_brackets"]],
    ["cut number trimmed", '{"a":1.', { a: 1 }, ["closed_brackets"]],
    ["cut exponent trimmed", '{"a":2e', { a: 2 }, ["closed_brackets"]],
    ["lone minus dropped", '{"a":-', {}, ["closed_brackets"]],
    ["dangling key dropped", '{"a":1,"b"', { a: 1 }, ["closed_brackets"]],
    ["dangling key and colon dropped", '{"a":1,"b":', { a: 1 }, ["closed_brackets"]],
    ["cut inside key dropped", '{"a":1,"bc', { a: 1 }, ["closed_brackets"]],
    ["cut escape dropped", '{"a":"x\\', { a: "x" }, ["closed_brackets"]],
    ["cut unicode escape dropped", '{"a":"x\\u00', { a: "x" }, ["closed_brackets"]],
    ["escaped backslash kept", '{"a":"x\\\\', { a: "x\\" }, ["closed_brackets"]],
    ["escaped quotes inside a string", '{"a":"say \\"hi\\"","b":1,}', { a: 'say "hi"', b: 1 }, ["trailing_commas"]],
    [
      "even backslashes before a quote end the string",
      '{"a":"x\\\\","b":[1,]}',
      { a: "x\\", b: [1] },
      ["trailing_commas"],
    ],
    ["odd backslashes before a quote escape it", '{"a":"x\\\\\\"y","b":2,}', { a: 'x\\"y', b: 2 }, ["trailing_commas"]],
    ["escaped backslash then a raw newline", '{"a":"x\\\\\ny"}', { a: "x\\\ny" }, ["control_chars"]],
    [
      "control characters in the second string only",
      '{"a":"plain","b":"x\ty"}',
      { a: "plain", b: "x\ty" },
      ["control_chars"],
    ],
    ["cut after an escaped quote", '{"a":"x\\"y', { a: 'x"y' }, ["closed_brackets"]],
    ["surplus closer at end", '{"a":1}}', { a: 1 }, ["surplus_closers"]],
    ["surplus closers and whitespace", '{"a":[1]} ]\n}', { a: [1] }, ["surplus_closers"]],
    ["surplus closer inside", '{"a":[1]],"b":2}', { a: [1], b: 2 }, ["surplus_closers"]],
    [
      "several rungs in ladder order",
      '{"a":"x\ny",,"b":[1,2,]}}',
      { a: "x\ny", b: [1, 2] },
      ["control_chars", "trailing_commas", "surplus_closers"],
    ],
    [
      "all rungs",
      '{"a":"x\ny","b":[1,]}]',
      { a: "x\ny", b: [1] },
      ["control_chars", "trailing_commas", "surplus_closers"],
    ],
    ["cut after trailing comma", '{"a":"x\ny",', { a: "x\ny" }, ["control_chars", "closed_brackets"]],
  ])("%s", (_label, raw, value, repairs) => {
    const r = parseArguments(raw);
    expect(r).toEqual({ ok: true, value, repairs });
  });

  it.each([
    ["array root", "[1,2]", "not_object"],
    ["string root", '"x"', "not_object"],
    ["null root", "null", "not_object"],
    ["not JSON at all", "path=a.ts", "unparseable"],
    ["single quotes", "{'a': 1}", "unparseable"],
    ["trailing garbage", '{"a":1} and more', "unparseable"],
  ])("refuses %s", (_label, raw, reason) => {
    const r = parseArguments(raw);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason);
  });

  it("refuses arguments above 1 MiB, even valid ones", () => {
    const big = JSON.stringify({ content: "x".repeat(MAX_ARGUMENT_BYTES) });
    const r = parseArguments(big);
    expect(r).toMatchObject({ ok: false, reason: "too_large" });
    expect(parseArguments(JSON.stringify({ content: "é".repeat(MAX_ARGUMENT_BYTES / 2) }))).toMatchObject({
      reason: "too_large",
    });
    expect(parseArguments(JSON.stringify({ content: "x".repeat(MAX_ARGUMENT_BYTES - 100) })).ok).toBe(true);
  });

  it.each([['{"a":1,}'], ['{"a":"x\ny"}'], ['{"a":1'], ['{"a":1}}']])(
    "strict mode accepts nothing but valid JSON: %j",
    (raw) => {
      expect(parseArguments(raw, { strict: true })).toMatchObject({ ok: false, reason: "unparseable" });
      expect(parseArguments(raw).ok).toBe(true);
    },
  );
});

describe("real tool calls cut at every position", () => {
  it.each(REAL_CALLS.map((c, i) => [c.name, i] as const))(
    "%s: every prefix repairs to a faithful prefix",
    (_name, i) => {
      const json = realCallJson(i);
      const original = REAL_CALLS[i].args;
      const unfaithful: string[] = [];
      for (let k = 0; k <= json.length; k++) {
        const r = parseArguments(json.slice(0, k));
        if (!r.ok || !isFaithfulPrefix(r.value, original)) unfaithful.push(`${k}: ${JSON.stringify(json.slice(0, k))}`);
      }
      expect(unfaithful).toEqual([]);
      expect(parseArguments(json)).toEqual({ ok: true, value: original, repairs: [] });
    },
  );

  it.each(REAL_CALLS.map((c, i) => [c.name, i] as const))(
    "%s: with raw newlines and tabs, every prefix is faithful",
    (_name, i) => {
      const json = rawControlChars(realCallJson(i));
      const original = REAL_CALLS[i].args;
      for (let k = 0; k <= json.length; k++) {
        const r = parseArguments(json.slice(0, k));
        expect(r.ok && isFaithfulPrefix(r.value, original), `cut at ${k}`).toBe(true);
      }
    },
  );

  it.each(REAL_CALLS.map((c, i) => [c.name, i] as const))("%s: damaged but complete repairs exactly", (_name, i) => {
    const json = realCallJson(i);
    const original = REAL_CALLS[i].args;
    for (const damaged of [
      rawControlChars(json),
      trailingCommas(json),
      surplusClosers(json),
      surplusClosers(trailingCommas(rawControlChars(json))),
    ]) {
      const r = parseArguments(damaged);
      expect(r.ok && r.value).toEqual(original);
    }
  });
});

// Strings of 16K characters and more take the ladder's no-copy path (big.ts): the same
// guarantees must hold there, cut anywhere, with escapes and raw control characters, and a
// NUL in the input must not be mistaken for the path's placeholder.
describe("long string values", () => {
  const chunk = 'line "quoted" \\ back ✓ 😀 tab\there\n';
  const long = chunk.repeat(Math.ceil(40_000 / chunk.length));
  const original = { path: "src/big.ts", content: long, note: "after" };
  const json = JSON.stringify(original);
  const cuts = Array.from({ length: 120 }, (_, i) => Math.floor((json.length * i) / 119));

  it.each([
    ["escaped", json],
    ["raw control characters", rawControlChars(json)],
  ])("%s: every sampled cut repairs to a faithful prefix, the whole text exactly", (_kind, text) => {
    for (const k of [...cuts, ...cuts.map((c) => c + 1), ...cuts.map((c) => c + 7)].filter((k) => k <= text.length)) {
      const r = parseArguments(text.slice(0, k));
      expect(r.ok && isFaithfulPrefix(r.value, original), `cut at ${k}`).toBe(true);
    }
    const whole = parseArguments(text);
    expect(whole.ok && whole.value).toEqual(original);
  });

  it("keeps a real NUL character in a long value", () => {
    const withNul = { content: `${"x".repeat(20_000)}\u0000${"y".repeat(20_000)}` };
    const text = JSON.stringify(withNul);
    expect(parseArguments(text)).toMatchObject({ ok: true, value: withNul });
    const cut = parseArguments(text.slice(0, 30_000));
    expect(cut.ok && isFaithfulPrefix(cut.value, withNul)).toBe(true);
  });
});
