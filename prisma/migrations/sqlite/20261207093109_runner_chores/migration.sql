-- CreateTable
CREATE TABLE "RunnerChore" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "runnerId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "workspaceId" TEXT,
    "sessionId" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "claimedUntil" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "RunnerChore_runnerId_idx" ON "RunnerChore"("runnerId");

-- CreateIndex
CREATE INDEX "RunnerChore_sessionId_idx" ON "RunnerChore"("sessionId");

