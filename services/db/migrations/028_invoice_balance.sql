-- An invoice's balance, defined once: gross + reminder fees − paid − credited (docs/api-conventions.md, "Payments and balances").
-- Every statement that computes a balance calls this with the invoice's terms; its TypeScript twin,
-- invoiceBalanceOere (services/invoices/invoice-balance.ts), computes the same from a row already read, and
-- test/db/invoice-balance.test.ts checks that the two agree.
--
-- The terms are sums (numeric), so the function is over numeric. A term that is NULL (no fee, payment or credit note:
-- a LEFT JOIN that found nothing) counts as 0. It is a plain SQL expression, IMMUTABLE and not STRICT, so the planner
-- inlines it into the calling statement: the plans of the balance reads are those of the expression written out.
CREATE FUNCTION invoice_balance_oere(gross_oere numeric, fees_oere numeric, paid_oere numeric, credited_oere numeric)
RETURNS numeric LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT gross_oere + coalesce(fees_oere, 0) - coalesce(paid_oere, 0) - coalesce(credited_oere, 0)
$$;
