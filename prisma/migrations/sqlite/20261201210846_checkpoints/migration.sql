-- AlterTable
ALTER TABLE "Turn" ADD COLUMN "rewindId" TEXT;

-- CreateTable
CREATE TABLE "Checkpoint" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sessionId" TEXT NOT NULL,
    "turnId" TEXT,
    "phase" TEXT NOT NULL,
    "commit" TEXT NOT NULL,
    "filesChanged" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "Checkpoint_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "Rewind" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sessionId" TEXT NOT NULL,
    "turnId" TEXT NOT NULL,
    "turnIds" JSONB NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "undoneAt" DATETIME,
    CONSTRAINT "Rewind_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "HunkReview" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sessionId" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "hunkId" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "HunkReview_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE INDEX "Checkpoint_sessionId_createdAt_idx" ON "Checkpoint"("sessionId", "createdAt");

-- CreateIndex
CREATE INDEX "Checkpoint_turnId_idx" ON "Checkpoint"("turnId");

-- CreateIndex
CREATE INDEX "Rewind_sessionId_createdAt_idx" ON "Rewind"("sessionId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "HunkReview_sessionId_scope_path_hunkId_key" ON "HunkReview"("sessionId", "scope", "path", "hunkId");

