-- CreateTable
CREATE TABLE "RunnerChore" (
    "id" TEXT NOT NULL,
    "runnerId" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "workspaceId" TEXT,
    "sessionId" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lastError" TEXT,
    "claimedUntil" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunnerChore_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "RunnerChore_runnerId_idx" ON "RunnerChore"("runnerId");

-- CreateIndex
CREATE INDEX "RunnerChore_sessionId_idx" ON "RunnerChore"("sessionId");

