-- reverse: modify "payment_status_changes" table
ALTER TABLE "payment_status_changes" DROP CONSTRAINT "status_change_statuses_known";
