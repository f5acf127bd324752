-- CreateTable
CREATE TABLE "Project" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "orgId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "sourceKind" TEXT NOT NULL DEFAULT 'empty',
    "gitUrl" TEXT,
    "gitBranch" TEXT,
    "archiveName" TEXT,
    "runnerLabels" JSONB NOT NULL DEFAULT [],
    "createdById" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "Workspace" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "projectId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "runnerId" TEXT,
    "runnerDefault" BOOLEAN NOT NULL DEFAULT false,
    "state" TEXT NOT NULL DEFAULT 'creating',
    "error" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Workspace_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Workspace_runnerId_fkey" FOREIGN KEY ("runnerId") REFERENCES "RunnerNode" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "RunnerNode" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "labels" JSONB NOT NULL DEFAULT [],
    "capacity" INTEGER NOT NULL DEFAULT 0,
    "freeDiskBytes" BIGINT,
    "root" BOOLEAN NOT NULL DEFAULT false,
    "servesDefault" BOOLEAN NOT NULL DEFAULT false,
    "instanceId" TEXT,
    "connectedAt" DATETIME,
    "disconnectedAt" DATETIME,
    "lastSeenAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Session" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "title" TEXT NOT NULL,
    "ownerId" TEXT NOT NULL,
    "orgId" TEXT NOT NULL,
    "workspace" TEXT NOT NULL,
    "projectId" TEXT,
    "workspaceId" TEXT,
    "provider" TEXT,
    "model" TEXT,
    "status" TEXT NOT NULL DEFAULT 'idle',
    "lastSeq" INTEGER NOT NULL DEFAULT 0,
    "publisherId" TEXT,
    "activatedTools" JSONB NOT NULL DEFAULT [],
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Session_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Session_orgId_fkey" FOREIGN KEY ("orgId") REFERENCES "Org" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Session_projectId_fkey" FOREIGN KEY ("projectId") REFERENCES "Project" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "Session_workspaceId_fkey" FOREIGN KEY ("workspaceId") REFERENCES "Workspace" ("id") ON DELETE SET NULL ON UPDATE CASCADE
);
INSERT INTO "new_Session" ("activatedTools", "createdAt", "id", "lastSeq", "model", "orgId", "ownerId", "provider", "publisherId", "status", "title", "updatedAt", "workspace") SELECT "activatedTools", "createdAt", "id", "lastSeq", "model", "orgId", "ownerId", "provider", "publisherId", "status", "title", "updatedAt", "workspace" FROM "Session";
DROP TABLE "Session";
ALTER TABLE "new_Session" RENAME TO "Session";
CREATE INDEX "Session_ownerId_updatedAt_idx" ON "Session"("ownerId", "updatedAt");
CREATE INDEX "Session_projectId_idx" ON "Session"("projectId");
CREATE INDEX "Session_workspaceId_idx" ON "Session"("workspaceId");
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

-- CreateIndex
CREATE UNIQUE INDEX "Project_orgId_name_key" ON "Project"("orgId", "name");

-- CreateIndex
CREATE INDEX "Workspace_runnerId_idx" ON "Workspace"("runnerId");

-- CreateIndex
CREATE UNIQUE INDEX "Workspace_projectId_userId_key" ON "Workspace"("projectId", "userId");

