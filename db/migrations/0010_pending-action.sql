ALTER TABLE "responses" ADD COLUMN "pending_action" jsonb;--> statement-breakpoint
ALTER TABLE "responses" ADD COLUMN "active_ms" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Runs already waiting keep waiting on the same row, now named on the response itself.
UPDATE "responses" r SET "pending_action" = jsonb_build_object('type', 'approval', 'id', a."id", 'callId', a."call_id")
FROM "approvals" a WHERE a."response_id" = r."id" AND a."status" = 'pending' AND r."status" = 'requires_action';--> statement-breakpoint
UPDATE "responses" r SET "pending_action" = jsonb_build_object('type', 'client_tool', 'id', c."id", 'callId', c."call_id")
FROM "client_tool_requests" c WHERE c."response_id" = r."id" AND c."status" = 'pending' AND r."status" = 'requires_action' AND r."pending_action" IS NULL;--> statement-breakpoint
UPDATE "responses" r SET "pending_action" = jsonb_build_object('type', 'question', 'id', q."id", 'callId', q."call_id")
FROM "questions" q WHERE q."response_id" = r."id" AND q."status" = 'pending' AND q."kind" <> 'gateway' AND r."status" = 'requires_action' AND r."pending_action" IS NULL;
