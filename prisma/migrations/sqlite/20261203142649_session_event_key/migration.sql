-- RedefineTables
PRAGMA defer_foreign_keys=ON;
PRAGMA foreign_keys=OFF;
CREATE TABLE "new_SessionEvent" (
    "id" TEXT,
    "sessionId" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,

    PRIMARY KEY ("sessionId", "seq"),
    CONSTRAINT "SessionEvent_sessionId_fkey" FOREIGN KEY ("sessionId") REFERENCES "Session" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_SessionEvent" ("createdAt", "id", "payload", "seq", "sessionId", "type") SELECT "createdAt", "id", "payload", "seq", "sessionId", "type" FROM "SessionEvent";
DROP TABLE "SessionEvent";
ALTER TABLE "new_SessionEvent" RENAME TO "SessionEvent";
PRAGMA foreign_keys=ON;
PRAGMA defer_foreign_keys=OFF;

