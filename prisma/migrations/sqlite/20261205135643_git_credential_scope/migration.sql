-- AlterTable
ALTER TABLE "Workspace" ADD COLUMN "gitRemote" TEXT;

-- AlterTable (existing credentials stay host-wide)
ALTER TABLE "GitCredential" ADD COLUMN "scope" TEXT NOT NULL DEFAULT '';

-- DropIndex
DROP INDEX "GitCredential_userId_host_key";

-- CreateIndex
CREATE UNIQUE INDEX "GitCredential_userId_host_scope_key" ON "GitCredential"("userId", "host", "scope");
