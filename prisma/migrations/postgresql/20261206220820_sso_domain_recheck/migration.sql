-- AlterTable
ALTER TABLE "SsoVerifiedDomain" ADD COLUMN     "checkedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "missingSince" TIMESTAMP(3);


-- A domain proven before was last looked up when it was verified.
UPDATE "SsoVerifiedDomain" SET "checkedAt" = "verifiedAt";
