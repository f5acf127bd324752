-- DropIndex
DROP INDEX "GitCredential_userId_host_key";

-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN     "gitRemote" TEXT;

-- AlterTable
ALTER TABLE "GitCredential" ADD COLUMN     "scope" TEXT NOT NULL DEFAULT '';

-- CreateIndex
CREATE UNIQUE INDEX "GitCredential_userId_host_scope_key" ON "GitCredential"("userId", "host", "scope");

