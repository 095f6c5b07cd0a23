ALTER TABLE "approvals" ADD COLUMN "external" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "idempotency_key" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "consumed_at" timestamp with time zone;--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_idempotency_uq" ON "approvals" USING btree ("user_id","idempotency_key");