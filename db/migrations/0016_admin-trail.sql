ALTER TABLE "audit_log" ADD COLUMN "channel" text DEFAULT 'console' NOT NULL;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "os_user" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "client_ip" text;--> statement-breakpoint
CREATE INDEX "audit_log_actor_idx" ON "audit_log" USING btree ("actor_user_id","at");--> statement-breakpoint
CREATE INDEX "audit_log_action_idx" ON "audit_log" USING btree ("action","at");--> statement-breakpoint
UPDATE "audit_log" SET "channel" = 'cli' WHERE "actor_user_id" IS NULL;--> statement-breakpoint
CREATE OR REPLACE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'The admin trail is append-only: % on audit_log is refused.', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;--> statement-breakpoint
CREATE TRIGGER "audit_log_append_only" BEFORE UPDATE OR DELETE ON "audit_log" FOR EACH ROW EXECUTE FUNCTION "audit_log_append_only"();--> statement-breakpoint
CREATE TRIGGER "audit_log_no_truncate" BEFORE TRUNCATE ON "audit_log" FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_append_only"();
