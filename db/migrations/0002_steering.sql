CREATE TYPE "public"."authority_kind" AS ENUM('run', 'source-bound');--> statement-breakpoint
CREATE TYPE "public"."steering_status" AS ENUM('queued', 'committed', 'rejected', 'cancelled');--> statement-breakpoint
CREATE TABLE "steering_messages" (
	"id" text PRIMARY KEY NOT NULL,
	"response_id" text NOT NULL,
	"session_id" text NOT NULL,
	"user_id" text NOT NULL,
	"text" text NOT NULL,
	"authority_kind" "authority_kind" NOT NULL,
	"via" "transport" NOT NULL,
	"status" "steering_status" DEFAULT 'queued' NOT NULL,
	"reason" text,
	"committed_turn" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"settled_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "steering_response_idx" ON "steering_messages" USING btree ("response_id","created_at");