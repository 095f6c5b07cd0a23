CREATE TYPE "public"."device_status" AS ENUM('pending', 'paired', 'revoked');--> statement-breakpoint
CREATE TABLE "devices" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"status" "device_status" DEFAULT 'pending' NOT NULL,
	"created_by" text NOT NULL,
	"pairing_token_hash" text NOT NULL,
	"pairing_expires_at" timestamp with time zone NOT NULL,
	"paired_at" timestamp with time zone,
	"credential_hash" text,
	"commands" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"policy" jsonb,
	"last_seen_at" timestamp with time zone,
	"revoked_at" timestamp with time zone,
	"revoked_by" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "devices_pairing_token_hash_unique" UNIQUE("pairing_token_hash"),
	CONSTRAINT "devices_credential_hash_unique" UNIQUE("credential_hash")
);
--> statement-breakpoint
ALTER TABLE "agent_sessions" ADD COLUMN "access" text DEFAULT 'default' NOT NULL;--> statement-breakpoint
ALTER TABLE "devices" ADD CONSTRAINT "devices_created_by_users_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "devices_active_name_uq" ON "devices" USING btree ("name") WHERE status <> 'revoked';--> statement-breakpoint
CREATE INDEX "devices_created_idx" ON "devices" USING btree ("created_at");