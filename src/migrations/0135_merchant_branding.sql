-- How the merchant's hosted pages look to its shoppers (issue 22, docs/checkout.md#the-page): a brand colour
-- (`#rrggbb`, the Pay button and the page's accent) and a logo (an https URL), both optional,
-- set in the dashboard's Settings or the operator API. NULL: Tessera's colour and no logo.
ALTER TABLE merchants ADD COLUMN brand_color text;
ALTER TABLE merchants ADD COLUMN logo_url text;
