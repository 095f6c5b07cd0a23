ALTER TABLE "users" ADD COLUMN "name_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "users_name_key_idx" ON "users" USING btree ("name_key") WHERE "users"."deleted_at" is null;