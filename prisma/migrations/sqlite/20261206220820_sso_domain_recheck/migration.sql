-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_SsoVerifiedDomain" (
    "domain" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "verifiedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "userId" TEXT NOT NULL,
    "checkedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "missingSince" DATETIME
);
-- A domain proven before was last looked up when it was verified.
INSERT INTO "new_SsoVerifiedDomain" ("domain", "organizationId", "userId", "verifiedAt", "checkedAt") SELECT "domain", "organizationId", "userId", "verifiedAt", "verifiedAt" FROM "SsoVerifiedDomain";
DROP TABLE "SsoVerifiedDomain";
ALTER TABLE "new_SsoVerifiedDomain" RENAME TO "SsoVerifiedDomain";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

