CREATE INDEX "approvals_pending_created_idx" ON "approvals" USING btree ("created_at","id") WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX "approvals_decided_created_idx" ON "approvals" USING btree ("created_at","id") WHERE status <> 'pending';--> statement-breakpoint
CREATE INDEX "agent_sessions_created_idx" ON "agent_sessions" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "agent_sessions_agent_idx" ON "agent_sessions" USING btree ("agent","created_at","id");--> statement-breakpoint
CREATE INDEX "response_events_response_actor_idx" ON "response_events" USING btree ("response_id","actor_user_id") WHERE actor_user_id is not null;--> statement-breakpoint
CREATE INDEX "response_events_session_actor_idx" ON "response_events" USING btree ("session_id","actor_user_id") WHERE actor_user_id is not null;--> statement-breakpoint
CREATE INDEX "responses_created_idx" ON "responses" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "responses_status_created_idx" ON "responses" USING btree ("status","created_at","id");--> statement-breakpoint
CREATE INDEX "responses_agent_created_idx" ON "responses" USING btree ("agent","created_at","id");--> statement-breakpoint
CREATE INDEX "steering_queued_idx" ON "steering_messages" USING btree ("created_at") WHERE status = 'queued';