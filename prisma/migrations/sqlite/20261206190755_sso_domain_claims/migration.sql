-- CreateTable
CREATE TABLE "SsoDomainClaim" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP
);

-- CreateTable
CREATE TABLE "SsoVerifiedDomain" (
    "domain" TEXT NOT NULL PRIMARY KEY,
    "organizationId" TEXT NOT NULL,
    "verifiedAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "userId" TEXT NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "SsoDomainClaim_organizationId_domain_key" ON "SsoDomainClaim"("organizationId", "domain");


-- The domains saved so far were never proven: each becomes a claim its org's owners verify.
WITH RECURSIVE split("orgId", "rest", "item") AS (
    SELECT "organizationId", "domain" || ',', '' FROM "SsoProvider" WHERE "organizationId" IS NOT NULL
    UNION ALL
    SELECT "orgId", substr("rest", instr("rest", ',') + 1), substr("rest", 1, instr("rest", ',') - 1)
    FROM split WHERE "rest" <> ''
)
INSERT OR IGNORE INTO "SsoDomainClaim" ("id", "organizationId", "domain")
SELECT 'm' || lower(hex(randomblob(12))), "orgId", lower(trim("item")) FROM split WHERE trim("item") <> '';
UPDATE "SsoProvider" SET "domain" = '';
