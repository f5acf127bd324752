-- CreateTable
CREATE TABLE "SpillChunk" (
    "spillId" TEXT NOT NULL,
    "offset" INTEGER NOT NULL,
    "bytes" BLOB NOT NULL,

    PRIMARY KEY ("spillId", "offset"),
    CONSTRAINT "SpillChunk_spillId_fkey" FOREIGN KEY ("spillId") REFERENCES "Spill" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

