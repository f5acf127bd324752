// Who may call the projects router (format: server/auth/authorize-table.ts). Projects are the
// org's: every member lists and creates them; renaming and deleting is for the project's
// creator and the org's owners and admins; another org's project is answered as a missing one.
import { defineAccess, SESSION_READ, SIGNED_IN, type AccessFixture, type Cells } from "../../auth/authorize-table";
import { projectsRouter } from "./projects";

const CREATOR_OR_ADMINS: Cells = { ...SIGNED_IN, member: "FORBIDDEN", otherOrg: "NOT_FOUND" };

/** A project of the org under test, made by its owner. */
async function ownersProject(fx: AccessFixture): Promise<string> {
  const p = await fx.db.project.create({
    data: { orgId: fx.orgId, name: `access ${fx.unique()}`, createdById: fx.users.owner },
  });
  return p.id;
}

export default defineAccess(projectsRouter, {
  list: { expect: SIGNED_IN, note: "signed-in person: their org's projects, their own sessions in each" },
  create: {
    expect: SIGNED_IN,
    input: (fx) => ({ name: `made ${fx.unique()}`, source: { kind: "empty" } }),
    note: "signed-in person, in their active org",
  },
  rename: {
    expect: CREATOR_OR_ADMINS,
    input: async (fx) => ({ id: await ownersProject(fx), name: `renamed ${fx.unique()}` }),
    note: "the project's creator, org owners and admins",
  },
  remove: {
    expect: CREATOR_OR_ADMINS,
    input: async (fx) => ({ id: await ownersProject(fx) }),
    note: "the project's creator, org owners and admins (asks first in the UI)",
  },
  workspaceOf: {
    expect: SESSION_READ,
    input: (fx) => ({ sessionId: fx.sessionId }),
    note: "whoever may read the session",
  },
});
