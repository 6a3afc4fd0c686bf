// Accounts seeded straight into Postgres for the list benches (INSERT ... SELECT generate_series): a million of one
// customer's accounts in seconds.
import type { Client } from 'pg';

// One customer's accounts, physically in creation order as a live table would be. created_at advances 31.5 s
// every 3 rows (so ties on created_at exist and the id tie-break is exercised); status is spread by a hash
// of the row number: 50% ACTIVE, 30% ACTION_REQUIRED, 20% UNDER_REVIEW, with a states history to match.
const SEED_SQL = `
insert into accounts (id, customer_id, owner, legal_name, status, states, assets, tags, source_account_id,
  created_at, updated_at)
select gen_random_uuid(), $1::uuid,
  jsonb_build_object('type', 'COMPANY', 'legalName', 'Bench Company ' || g || ' Ltda',
    'taxId', jsonb_build_object('value', lpad(g::text, 14, '0'), 'type', 'CNPJ'), 'industry', 'TECHNOLOGY',
    'incorporateDate', '2015-03-10',
    'address', jsonb_build_object('addressLine1', 'Av. Paulista, ' || (g % 5000), 'city', 'São Paulo', 'state', 'SP',
      'country', 'BR', 'postalCode', '01310-100')),
  'Bench Company ' || g || ' Ltda',
  st,
  case st
    when 'ACTION_REQUIRED' then jsonb_build_array(jsonb_build_object('status', 'ACTION_REQUIRED', 'createdAt', ts_text))
    when 'UNDER_REVIEW' then jsonb_build_array(jsonb_build_object('status', 'ACTION_REQUIRED', 'createdAt', ts_text),
      jsonb_build_object('status', 'UNDER_REVIEW', 'createdAt', ts_text))
    else jsonb_build_array(jsonb_build_object('status', 'ACTION_REQUIRED', 'createdAt', ts_text),
      jsonb_build_object('status', 'UNDER_REVIEW', 'createdAt', ts_text),
        jsonb_build_object('status', 'ACTIVE', 'createdAt', ts_text))
  end,
  jsonb_build_array(
    jsonb_build_object('asset', 'BRL', 'allowsVirtualAccounts', false,
      'status', case when st = 'ACTIVE' then 'ACTIVE' else 'ONBOARDING' end),
    jsonb_build_object('asset', 'USD', 'allowsVirtualAccounts', false,
      'status', case when st = 'ACTIVE' then 'ACTIVE' else 'ONBOARDING' end)),
  '[]'::jsonb, null, ts, ts
from (
  select g, ts, to_char(ts at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ts_text,
    case when h < 5 then 'ACTIVE' when h < 8 then 'ACTION_REQUIRED' else 'UNDER_REVIEW' end as st
  from (
    select g, timestamptz '2025-01-01 00:00:00+00' + ((g / 3) * interval '31.5 seconds') as ts,
      abs(hashint4(g)) % 10 as h
    from generate_series(1, $2::int) g
  ) s0
) s`;

/** `rows` accounts of `customerId`: half ACTIVE, 30 % ACTION_REQUIRED, 20 % UNDER_REVIEW, oldest first. */
export async function seedAccounts(db: Client, customerId: string, rows: number): Promise<void> {
  await db.query(SEED_SQL, [customerId, rows]);
}
