// Instructions written for the model are not shown to the person (issue 23, item 12): the
// model's result keeps them, the tool.finished event the UI shows carries the person's text.
import { describe, expect, it } from "vitest";
import { testDatabases, useTestDb } from "../testing/db";
import type { SessionEventBody } from "../protocol/events";
import {
  bigOutputTool,
  call,
  type Harness,
  newTurn,
  readTool,
  request,
  shellTool,
  usePipelines,
} from "../testing/pipeline";
import { forPerson, MODEL_TEXT_CAP, personCopy, personNote } from "./person";

type Finished = Extract<SessionEventBody, { type: "tool.finished" }>;

describe.each(testDatabases())("the person's copy of results on %s", (provider) => {
  const t = useTestDb(provider);
  const setup = usePipelines(t);
  const shown = (h: Harness, sessionId: string) =>
    h.events
      .filter((e) => e.sessionId === sessionId && e.event.type === "tool.finished")
      .map((e) => (e.event as Finished).output);

  it("a policy deny, a loop-guard block and a cut output: the model is told what to do, the person is not", async () => {
    const big = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join("\n");
    const h = setup({ tools: [readTool, shellTool, bigOutputTool(() => ({ output: big, kind: "shell" }))] });
    const s = await newTurn(t.current);
    await t.current.db.orgPolicy.create({
      data: { orgId: s.org.id, version: 1, rules: [{ effect: "deny", tool: "shell", reason: "no commands here" }] },
    });
    const same = () => call("read_file", { path: "a" });
    const out = await h.pipeline.dispatch(
      request(h, s, [call("shell", { command: "ls" }), same(), same(), same(), call("big_output", {})]),
    );
    const model = out.results.map((r) => r.content);
    const person = shown(h, s.session.id);
    expect(model[0]).toMatch(/do not retry it\. Tell the person/);
    expect(person[0]).toBe("Denied by org policy v1, a rule: no commands here. It cannot be approved.");
    expect(model[3]).toMatch(/Use the earlier result/);
    expect(person.find((p) => p.startsWith("Blocked"))).not.toMatch(/Use the earlier result/);
    expect(model[4]).toMatch(/call retrieve_tool_result with \{"ref":"sp_/);
    const cut = person.find((p) => p.includes("bytes omitted"))!;
    expect(cut).not.toMatch(/retrieve_tool_result/);
    expect(cut).toMatch(/The full output \([\d,]+ bytes\) is stored\.\]/);
    for (const p of person) expect(p).not.toMatch(/do not retry|Do not send it again|retrieve_tool_result/);
  });

  it("rejections and polls read as said to the person", () => {
    expect(
      forPerson("The person rejected this call; it did not run. Their message: no. Do not send it again as is."),
    ).toBe("Rejected; it did not run. Their message: no.");
    expect(
      forPerson(
        'Still running after 2.0 s (session_id sh_ab12cd). Call shell with {"session_id":"sh_ab12cd"} for more output and the exit code, or add "kill": true to stop it.\nout',
      ),
    ).toBe("Still running after 2.0 s (session_id sh_ab12cd).\nout");
  });

  it("a failure written for the model becomes a one-line note, with the model's exact text kept behind it", () => {
    const told = "The question is empty: write the question you want answered.";
    expect(personCopy(told, true, true)).toEqual({ output: told, note: "The question is empty.", modelText: told });
    const runner =
      "shell cannot run right now: no runner is connected for this session. Try again once the runner reconnects.";
    expect(personNote(runner)).toBe("shell cannot run right now: no runner is connected for this session.");
    expect(personNote("Denied by org policy v1, a rule: no commands here. It cannot be approved.")).toBe(
      "Denied by org policy v1, a rule: no commands here.",
    );
  });

  it("a command's own output is shown as it is; a long cut output repeats only what was left out for the person", () => {
    expect(personCopy("exit 1\nnpm ERR! missing script: build", true, false)).toEqual({
      output: "exit 1\nnpm ERR! missing script: build",
    });
    expect(personCopy("ok", false, true)).toEqual({ output: "ok" });
    const big = `${"x".repeat(MODEL_TEXT_CAP)}\n[… 10 bytes omitted (lines 2–3 of 9). The full output (99 bytes) is stored: call retrieve_tool_result with {"ref":"sp_1","offset":0,"length":20000} (or a line range or pattern) to read the omitted part.]`;
    const copy = personCopy(big, false, false);
    expect(copy.output).not.toMatch(/retrieve_tool_result/);
    expect(copy.note).toBeUndefined();
    expect(copy.modelText).toMatch(/^: call retrieve_tool_result with \{"ref":"sp_1"/);
    expect(copy.modelText!.length).toBeLessThan(200);
  });

  it("network output is shown without the marks that tell the model it is data; the model's copy keeps them", () => {
    const page =
      '<external_content source="https://example.com/a">\n<h1>Hi</h1>\nbody <external_content_ x>\n</external_content>';
    expect(personCopy(page, false, false)).toEqual({
      output: "<h1>Hi</h1>\nbody <external_content_ x>",
      modelText: '<external_content source="https://example.com/a"> … </external_content>',
    });
    // A command with network that is still running: the poll advice and the marks both go.
    const running =
      '<external_content>\nStill running after 2.2 s (session_id sh_1). Call shell with {"session_id":"sh_1"} for more output and the exit code, or add "kill": true to stop it.\nServing HTTP\n</external_content>';
    const copy = personCopy(running, false, false);
    expect(copy.output).toBe("Still running after 2.2 s (session_id sh_1).\nServing HTTP");
    expect(copy.modelText).toMatch(/^<external_content> … <\/external_content>\nCall shell with/);
    // Only a whole wrapped text is unwrapped: output that merely mentions the tag stays as it is.
    expect(forPerson("see <external_content>\nx\n</external_content>")).toBe(
      "see <external_content>\nx\n</external_content>",
    );
  });
});
