-- DropIndex
DROP INDEX "SessionEvent_sessionId_seq_key";

-- AlterTable
ALTER TABLE "SessionEvent" DROP CONSTRAINT "SessionEvent_pkey",
ALTER COLUMN "id" DROP NOT NULL,
ADD CONSTRAINT "SessionEvent_pkey" PRIMARY KEY ("sessionId", "seq");

