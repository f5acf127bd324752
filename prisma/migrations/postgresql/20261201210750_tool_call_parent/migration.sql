-- AlterTable
ALTER TABLE "ToolCall" ADD COLUMN     "parentCallId" TEXT;

-- CreateIndex
CREATE INDEX "ToolCall_parentCallId_idx" ON "ToolCall"("parentCallId");

