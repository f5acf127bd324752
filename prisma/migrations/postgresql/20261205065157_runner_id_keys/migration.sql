-- CreateTable
CREATE TABLE "RunnerIdKey" (
    "idKey" TEXT NOT NULL,
    "runnerId" TEXT NOT NULL,
    "publicKey" TEXT NOT NULL,
    "firstSeen" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastSeen" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "RunnerIdKey_pkey" PRIMARY KEY ("idKey")
);

