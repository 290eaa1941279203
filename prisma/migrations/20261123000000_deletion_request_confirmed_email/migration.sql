-- A hash of the email the user typed back when filing (decision 0014): filing again with the same
-- email returns the pending request without asking the identity provider again. Not the address
-- itself: the request outlives the account it asks to delete.
ALTER TABLE "DeletionRequest" ADD COLUMN "confirmedEmailHash" TEXT;
