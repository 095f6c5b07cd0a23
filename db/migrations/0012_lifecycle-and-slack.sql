ALTER TYPE "public"."transport" ADD VALUE 'slack';--> statement-breakpoint
ALTER TYPE "public"."notify_event" ADD VALUE 'resolved';--> statement-breakpoint
ALTER TYPE "public"."notify_event" ADD VALUE 'completed';--> statement-breakpoint
ALTER TYPE "public"."notify_event" ADD VALUE 'failed';--> statement-breakpoint
ALTER TYPE "public"."notify_subject" ADD VALUE 'response';