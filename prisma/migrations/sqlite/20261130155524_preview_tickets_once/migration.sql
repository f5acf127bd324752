-- CreateTable
CREATE TABLE "UsedPreviewTicket" (
    "nonce" TEXT NOT NULL PRIMARY KEY,
    "expiresAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE INDEX "UsedPreviewTicket_expiresAt_idx" ON "UsedPreviewTicket"("expiresAt");

