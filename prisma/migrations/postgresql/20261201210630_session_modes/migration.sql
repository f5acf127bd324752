-- AlterTable
ALTER TABLE "Org" ADD COLUMN     "forbiddenModes" JSONB NOT NULL DEFAULT '[]';

-- AlterTable
ALTER TABLE "Session" ADD COLUMN     "mode" TEXT NOT NULL DEFAULT 'ask';

-- AlterTable
ALTER TABLE "ToolCall" ADD COLUMN     "mode" TEXT;

