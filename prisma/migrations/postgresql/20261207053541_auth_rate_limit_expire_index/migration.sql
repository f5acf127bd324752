-- CreateIndex
CREATE INDEX "AuthRateLimit_expire_idx" ON "AuthRateLimit"("expire");

