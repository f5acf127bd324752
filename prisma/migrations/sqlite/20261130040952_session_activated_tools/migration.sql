-- AlterTable
ALTER TABLE "Session" ADD COLUMN "activatedTools" JSONB NOT NULL DEFAULT '[]';
