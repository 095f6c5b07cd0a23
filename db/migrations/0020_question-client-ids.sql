ALTER TABLE "questions" ADD COLUMN "client_id" text;--> statement-breakpoint
-- Gateway questions registered before: their creators address them by their id, which stays theirs.
UPDATE "questions" SET "client_id" = "id" WHERE "kind" = 'gateway';--> statement-breakpoint
CREATE UNIQUE INDEX "questions_client_id_uq" ON "questions" USING btree ("user_id","client_id") WHERE client_id is not null;
