-- When the subscription ends or ended (decision 0029). Rows stored before this and set to end were
-- set the classic way, at the end of the period. The end of an ended row is unknown until its next
-- event, and the account page then shows no date rather than the end of the period.
-- No semicolons in these comments: the migration runner splits the script at every one.
ALTER TABLE "Subscription" ADD COLUMN "endsAt" TIMESTAMPTZ(3);
UPDATE "Subscription" SET "endsAt" = "currentPeriodEnd"
  WHERE "cancelAtPeriodEnd" AND "processorStatus" IN ('active', 'trialing', 'past_due', 'unpaid', 'paused');
