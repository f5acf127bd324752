-- AlterTable
ALTER TABLE "Session" ADD COLUMN "publisherId" TEXT;

-- AlterTable
ALTER TABLE "Turn" ADD COLUMN "instanceId" TEXT;

-- CreateTable
CREATE TABLE "ServerInstance" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "startedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "seenAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateIndex
CREATE INDEX "ServerInstance_seenAt_idx" ON "ServerInstance"("seenAt");

