ALTER TABLE "approvals" ADD COLUMN "reviewer" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "reviewer_rationale" text;