-- A pending request an administrator withdrew at the user's word (decision 0021): closed without
-- deleting anything. The value is only added here, not used, so this is safe inside a transaction.
ALTER TYPE "DeletionRequestStatus" ADD VALUE 'withdrawn';
