ALTER TABLE "approvals" ADD COLUMN "shadow" text;--> statement-breakpoint
ALTER TABLE "gate_passes" ADD COLUMN "shadow" text;--> statement-breakpoint
CREATE INDEX "approvals_shadow_created_idx" ON "approvals" USING btree ("created_at","shadow","outcome","agent","action","user_id","decided_by") WHERE shadow is not null;--> statement-breakpoint
CREATE INDEX "gate_passes_shadow_created_idx" ON "gate_passes" USING btree ("created_at","shadow","settled_by","agent","action","user_id") WHERE shadow is not null;