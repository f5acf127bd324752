// `@` mentions in the message box: which word the caret is in, and what choosing a file makes of it.
import { describe, expect, it } from "vitest";
import { insertMention, mentionAt } from "./mentions";

describe("mentions", () => {
  it("finds the @word the caret ends, at the start or after a space only", () => {
    expect(mentionAt("@", 1)).toEqual({ start: 0, query: "" });
    expect(mentionAt("look at @src/pa", 15)).toEqual({ start: 8, query: "src/pa" });
    expect(mentionAt("mail me@example.com", 19)).toBeNull();
    expect(mentionAt("look at @src/pa then", 20)).toBeNull();
    expect(mentionAt("look at @src/pa then", 15)).toEqual({ start: 8, query: "src/pa" });
  });

  it("puts @path and a space in place of the word, the caret after it, the rest kept", () => {
    expect(insertMention("look at @pa and fix", 11, "app/page.tsx")).toEqual({
      text: "look at @app/page.tsx  and fix",
      caret: 22,
    });
    expect(insertMention("@", 1, "a.ts")).toEqual({ text: "@a.ts ", caret: 6 });
    expect(insertMention("no mention", 3, "a.ts")).toEqual({ text: "no mention", caret: 3 });
  });
});
