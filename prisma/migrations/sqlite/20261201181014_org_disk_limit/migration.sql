-- AlterTable
ALTER TABLE "Org" ADD COLUMN "diskLimitMb" INTEGER;

