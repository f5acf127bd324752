-- DropIndex
DROP INDEX "SessionEvent_sessionId_seq_key";

-- AlterTable
ALTER TABLE "SessionEvent" DROP CONSTRAINT "SessionEvent_pkey",
DROP COLUMN "id",
ADD CONSTRAINT "SessionEvent_pkey" PRIMARY KEY ("sessionId", "seq");

