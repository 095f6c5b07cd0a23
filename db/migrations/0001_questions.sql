CREATE TYPE "public"."question_kind" AS ENUM('gateway', 'ask_user', 'secret', 'structured', 'url');--> statement-breakpoint
CREATE TYPE "public"."question_status" AS ENUM('pending', 'answered', 'cancelled', 'expired');--> statement-breakpoint
CREATE TABLE "questions" (
	"id" text PRIMARY KEY NOT NULL,
	"kind" "question_kind" NOT NULL,
	"user_id" text NOT NULL,
	"session_id" text,
	"response_id" text,
	"call_id" text,
	"creator" jsonb NOT NULL,
	"questions" jsonb NOT NULL,
	"status" "question_status" DEFAULT 'pending' NOT NULL,
	"answers" jsonb,
	"answered_by" text,
	"answered_via" "transport",
	"resolved_at" timestamp with time zone,
	"expires_at" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "secret_values" (
	"id" text PRIMARY KEY NOT NULL,
	"question_id" text NOT NULL,
	"answer_key" text NOT NULL,
	"user_id" text NOT NULL,
	"ciphertext" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "questions_pending_idx" ON "questions" USING btree ("expires_at") WHERE status = 'pending';--> statement-breakpoint
CREATE UNIQUE INDEX "questions_one_pending_per_session" ON "questions" USING btree ("session_id") WHERE status = 'pending' and session_id is not null and kind <> 'gateway';--> statement-breakpoint
CREATE INDEX "questions_user_idx" ON "questions" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "secret_values_answer_uq" ON "secret_values" USING btree ("question_id","answer_key");