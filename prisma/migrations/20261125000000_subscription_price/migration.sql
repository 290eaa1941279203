-- What the processor bills each period for the subscription (decision 0025). Nullable: rows stored
-- before this are filled by the subscription's next event, and until then /account shows no price.
ALTER TABLE "Subscription" ADD COLUMN "priceAmount" INTEGER,
ADD COLUMN "priceCurrency" TEXT;
