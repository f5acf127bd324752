-- CreateTable
CREATE TABLE "SpillChunk" (
    "spillId" TEXT NOT NULL,
    "offset" INTEGER NOT NULL,
    "bytes" BYTEA NOT NULL,

    CONSTRAINT "SpillChunk_pkey" PRIMARY KEY ("spillId","offset")
);

-- AddForeignKey
ALTER TABLE "SpillChunk" ADD CONSTRAINT "SpillChunk_spillId_fkey" FOREIGN KEY ("spillId") REFERENCES "Spill"("id") ON DELETE CASCADE ON UPDATE CASCADE;

