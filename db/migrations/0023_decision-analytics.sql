CREATE TYPE "public"."settled_by" AS ENUM('policy', 'grant', 'reviewer');--> statement-breakpoint
CREATE TABLE "gate_passes" (
	"id" text PRIMARY KEY NOT NULL,
	"response_id" text NOT NULL,
	"session_id" text NOT NULL,
	"user_id" text NOT NULL,
	"agent" text NOT NULL,
	"call_id" text NOT NULL,
	"tool_name" text NOT NULL,
	"action" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"cwd" text,
	"risk" "risk" NOT NULL,
	"settled_by" "settled_by" NOT NULL,
	"decision" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"request_key" text GENERATED ALWAYS AS (md5(action || ' ' || arguments::text)) STORED
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "agent" text;--> statement-breakpoint
UPDATE "approvals" a SET "agent" = r."agent" FROM "responses" r WHERE r."id" = a."response_id";--> statement-breakpoint
ALTER TABLE "approvals" ALTER COLUMN "agent" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "settled_by" "settled_by";--> statement-breakpoint
UPDATE "approvals" a SET "settled_by" = (CASE
  WHEN EXISTS (SELECT 1 FROM "response_events" e WHERE e."response_id" = a."response_id" AND e."type" = 'grant.used') THEN 'grant'
  WHEN a."reviewer" IS NOT NULL THEN 'reviewer'
  ELSE 'policy' END)::"settled_by"
  WHERE a."external" AND a."decided_via" = 'system' AND a."status" IN ('approved', 'denied');--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "outcome" text GENERATED ALWAYS AS (CASE
  WHEN status = 'pending' THEN NULL
  WHEN settled_by = 'policy' THEN 'policy'
  WHEN settled_by = 'grant' THEN 'grant'
  WHEN settled_by = 'reviewer' THEN 'reviewer'
  WHEN status = 'approved' AND original_arguments IS NOT NULL THEN 'edited'
  WHEN status = 'approved' THEN 'approved'
  WHEN status = 'denied' AND reply_message IS NOT NULL THEN 'replied'
  WHEN status = 'denied' THEN 'denied'
  WHEN status = 'expired' THEN 'expired'
  ELSE 'cancelled' END) STORED;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "request_key" text GENERATED ALWAYS AS (md5(action || ' ' || coalesce(original_arguments, arguments)::text)) STORED;--> statement-breakpoint
ALTER TABLE "gate_passes" ADD CONSTRAINT "gate_passes_response_id_responses_id_fk" FOREIGN KEY ("response_id") REFERENCES "public"."responses"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "gate_passes_call_uq" ON "gate_passes" USING btree ("response_id","call_id");--> statement-breakpoint
CREATE INDEX "gate_passes_created_idx" ON "gate_passes" USING btree ("created_at","settled_by","agent","action","user_id","request_key","id");--> statement-breakpoint
CREATE INDEX "approvals_outcome_created_idx" ON "approvals" USING btree ("created_at","outcome","agent","action","user_id","decided_by","decided_at","request_key","id") WHERE outcome is not null;