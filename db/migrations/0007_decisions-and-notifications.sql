CREATE TYPE "public"."grant_scope" AS ENUM('session', 'days');--> statement-breakpoint
CREATE TYPE "public"."notification_status" AS ENUM('pending', 'delivered', 'failed');--> statement-breakpoint
CREATE TYPE "public"."notify_channel_type" AS ENUM('webhook', 'slack', 'email');--> statement-breakpoint
CREATE TYPE "public"."notify_event" AS ENUM('requested', 'reminder', 'escalation');--> statement-breakpoint
CREATE TYPE "public"."notify_subject" AS ENUM('approval', 'question');--> statement-breakpoint
ALTER TYPE "public"."transport" ADD VALUE 'link';--> statement-breakpoint
CREATE TABLE "grants" (
	"id" text PRIMARY KEY NOT NULL,
	"user_id" text NOT NULL,
	"agent" text NOT NULL,
	"tool_name" text NOT NULL,
	"action" text NOT NULL,
	"arguments" jsonb NOT NULL,
	"cwd" text,
	"operation_hash" text NOT NULL,
	"scope" "grant_scope" NOT NULL,
	"session_id" text,
	"expires_at" timestamp with time zone,
	"approval_id" text NOT NULL,
	"created_by" text NOT NULL,
	"created_via" "transport" NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"uses" integer DEFAULT 0 NOT NULL,
	"last_used_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"revoked_by" text
);
--> statement-breakpoint
CREATE TABLE "link_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"token_hash" text NOT NULL,
	"subject_kind" "notify_subject" NOT NULL,
	"subject_id" text NOT NULL,
	"user_id" text NOT NULL,
	"notification_id" text,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "link_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
CREATE TABLE "notification_attempts" (
	"id" serial PRIMARY KEY NOT NULL,
	"notification_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"ok" boolean NOT NULL,
	"status_code" integer,
	"error" text,
	"duration_ms" integer NOT NULL,
	"at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_plans" (
	"subject_id" text NOT NULL,
	"event" "notify_event" NOT NULL,
	"subject_kind" "notify_subject" NOT NULL,
	"deliveries" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notification_plans_subject_id_event_pk" PRIMARY KEY("subject_id","event")
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" text PRIMARY KEY NOT NULL,
	"subject_kind" "notify_subject" NOT NULL,
	"subject_id" text NOT NULL,
	"response_id" text,
	"event" "notify_event" NOT NULL,
	"channel" text NOT NULL,
	"channel_type" "notify_channel_type" NOT NULL,
	"recipient" text NOT NULL,
	"recipient_user_id" text,
	"payload" jsonb NOT NULL,
	"status" "notification_status" DEFAULT 'pending' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_error" text,
	"last_status_code" integer,
	"delivered_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "original_arguments" jsonb;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "original_binding_hash" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "reply_message" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "grant_id" text;--> statement-breakpoint
CREATE INDEX "grants_active_idx" ON "grants" USING btree ("user_id","agent","operation_hash") WHERE revoked_at is null;--> statement-breakpoint
CREATE INDEX "grants_created_idx" ON "grants" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "link_tokens_subject_idx" ON "link_tokens" USING btree ("subject_id");--> statement-breakpoint
CREATE INDEX "notification_attempts_notification_idx" ON "notification_attempts" USING btree ("notification_id","attempt");--> statement-breakpoint
CREATE INDEX "notifications_due_idx" ON "notifications" USING btree ("next_attempt_at") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "notifications_subject_idx" ON "notifications" USING btree ("subject_id");--> statement-breakpoint
CREATE INDEX "notifications_created_idx" ON "notifications" USING btree ("created_at","id");