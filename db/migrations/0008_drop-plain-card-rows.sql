-- Card rows written before the card number was sealed hold it in plain text: destroy them before
-- the columns go (0009), so no plain card number survives the upgrade. The model only ever saw last4.
DELETE FROM "payment_cards";
