import { describe, expect, it } from "vitest";
import { createIdeBus } from "./ide-bus";

describe("the IDE bus", () => {
  it("delivers a command after the render that follows it, to every listener", () => {
    let renders = 0;
    const bus = createIdeBus(() => renders++);
    const heard: string[] = [];
    bus.listen("terminal.focus", () => heard.push("a"));
    bus.listen("terminal.focus", () => heard.push("b"));
    bus.send("terminal.focus");
    expect(renders).toBe(1);
    expect(heard).toEqual([]);
    bus.deliver();
    expect(heard).toEqual(["a", "b"]);
    bus.deliver();
    expect(heard).toEqual(["a", "b"]);
  });

  it("keeps a command nobody listens to for its first listener, once", () => {
    const bus = createIdeBus(() => {});
    bus.send("search.replace");
    bus.deliver();
    const heard: string[] = [];
    const stop = bus.listen("search.replace", () => heard.push("first"));
    bus.listen("search.replace", () => heard.push("second"));
    expect(heard).toEqual(["first"]);
    stop();
    bus.send("search.replace");
    bus.deliver();
    expect(heard).toEqual(["first", "second"]);
  });

  it("does not hand one command's send to another's listeners", () => {
    const bus = createIdeBus(() => {});
    let focused = 0;
    bus.listen("preview.focus", () => focused++);
    bus.send("model.choose");
    bus.deliver();
    expect(focused).toBe(0);
  });

  it("hands a command's value to its listeners: the last one sent before delivery, also to a waiting first listener", () => {
    const bus = createIdeBus(() => {});
    const shown: string[] = [];
    bus.listen("side.show", (view) => shown.push(view));
    bus.send("side.show", "search");
    bus.send("side.show", "changes");
    bus.deliver();
    expect(shown).toEqual(["changes"]);
    bus.send("preview.open", { port: 5173, path: "/docs" });
    bus.deliver();
    const opened: string[] = [];
    bus.listen("preview.open", (at) => opened.push(`${at.port}${at.path}`));
    expect(opened).toEqual(["5173/docs"]);
  });
});
