CREATE TABLE "policy_suggestion_dismissals" (
	"change_key" text NOT NULL,
	"window_days" integer NOT NULL,
	"dismissed_by" text NOT NULL,
	"dismissed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "policy_suggestion_dismissals_change_key_window_days_pk" PRIMARY KEY("change_key","window_days")
);
