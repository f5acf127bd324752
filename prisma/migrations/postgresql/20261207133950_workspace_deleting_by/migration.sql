-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "deletingBy" TEXT;

