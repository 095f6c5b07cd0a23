CREATE TABLE "slack_messages" (
	"notification_id" text PRIMARY KEY NOT NULL,
	"subject_id" text NOT NULL,
	"channel" text NOT NULL,
	"slack_channel" text NOT NULL,
	"ts" text NOT NULL,
	"update_id" text,
	"posted_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "slack_messages_subject_idx" ON "slack_messages" USING btree ("subject_id");