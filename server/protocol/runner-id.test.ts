import { describe, expect, it } from "vitest";
import { defaultRunnerId } from "./runner-id";

describe("defaultRunnerId", () => {
  it("names the host and 8 hex of the served folder, the same for the same folder", () => {
    expect(defaultRunnerId("vm-1", "/srv/w")).toMatch(/^vm-1-[0-9a-f]{8}$/);
    expect(defaultRunnerId("vm-1", "/srv/w")).toBe(defaultRunnerId("vm-1", "/srv/w"));
  });

  it("differs for another folder or another host", () => {
    expect(defaultRunnerId("vm-1", "/srv/w")).not.toBe(defaultRunnerId("vm-1", "/srv/w2"));
    expect(defaultRunnerId("vm-1", "/srv/w")).not.toBe(defaultRunnerId("vm-2", "/srv/w"));
  });
});
