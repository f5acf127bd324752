-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "publisherId" TEXT;

-- AlterTable
ALTER TABLE "Turn" ADD COLUMN     "instanceId" TEXT;

-- CreateTable
CREATE TABLE "ServerInstance" (
    "id" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "seenAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ServerInstance_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "ServerInstance_seenAt_idx" ON "ServerInstance"("seenAt");

