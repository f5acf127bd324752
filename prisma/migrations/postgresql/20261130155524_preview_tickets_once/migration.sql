-- CreateTable
CREATE TABLE "UsedPreviewTicket" (
    "nonce" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "UsedPreviewTicket_pkey" PRIMARY KEY ("nonce")
);

-- CreateIndex
CREATE INDEX "UsedPreviewTicket_expiresAt_idx" ON "UsedPreviewTicket"("expiresAt");

