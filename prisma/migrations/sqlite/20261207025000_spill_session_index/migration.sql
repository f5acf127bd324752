-- CreateIndex
CREATE INDEX "Spill_sessionId_idx" ON "Spill"("sessionId");

