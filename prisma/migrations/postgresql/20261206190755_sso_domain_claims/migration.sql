-- CreateTable
CREATE TABLE "SsoDomainClaim" (
    "id" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "domain" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "SsoDomainClaim_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "SsoVerifiedDomain" (
    "domain" TEXT NOT NULL,
    "organizationId" TEXT NOT NULL,
    "verifiedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "userId" TEXT NOT NULL,

    CONSTRAINT "SsoVerifiedDomain_pkey" PRIMARY KEY ("domain")
);

-- CreateIndex
CREATE UNIQUE INDEX "SsoDomainClaim_organizationId_domain_key" ON "SsoDomainClaim"("organizationId", "domain");


-- The domains saved so far were never proven: each becomes a claim its org's owners verify.
INSERT INTO "SsoDomainClaim" ("id", "organizationId", "domain")
SELECT DISTINCT ON (p."organizationId", lower(trim(d))) 'm' || md5(random()::text || clock_timestamp()::text), p."organizationId", lower(trim(d))
FROM "SsoProvider" p, unnest(string_to_array(p."domain", ',')) AS d
WHERE p."organizationId" IS NOT NULL AND trim(d) <> ''
ON CONFLICT DO NOTHING;
UPDATE "SsoProvider" SET "domain" = '';
