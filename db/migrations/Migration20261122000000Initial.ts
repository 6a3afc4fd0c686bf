import { Migration } from '@mikro-orm/migrations';

// The initial schema: generated from db/entities, then given the keyset-list indexes and the balance
// checks by hand. A balance can never go negative, whatever the code above it does.
export class Migration20261122000000Initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "accounts" ("id" uuid not null, "customer_id" uuid not null, "owner" jsonb not null, "legal_name" varchar(255) not null, "status" varchar(255) not null, "states" jsonb not null, "assets" jsonb not null, "tags" jsonb not null, "source_account_id" uuid null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "accounts_pkey" primary key ("id"));`);
    this.addSql(`create table "account_documents" ("id" uuid not null, "account_id" uuid not null, "customer_id" uuid not null, "document_type" varchar(255) not null, "ubo_id" uuid null, "file_name" varchar(255) not null, "content_type" varchar(255) not null, "size_bytes" int not null, "content" bytea not null, "status" varchar(255) not null, "reason" varchar(255) null, "created_at" timestamptz(3) not null, constraint "account_documents_pkey" primary key ("id"));`);
    this.addSql(`create index "account_documents_account_id_index" on "account_documents" ("account_id");`);
    this.addSql(`create table "api_clients" ("client_id" varchar(255) not null, "customer_id" uuid not null, "secret_hash" varchar(255) not null, "created_at" timestamptz(3) not null, constraint "api_clients_pkey" primary key ("client_id"));`);
    this.addSql(`create index "api_clients_customer_id_index" on "api_clients" ("customer_id");`);
    this.addSql(`create table "balances" ("account_id" uuid not null, "asset" varchar(255) not null, "customer_id" uuid not null, "available" numeric(38,6) not null, "held" numeric(38,6) not null, "updated_at" timestamptz(3) not null, constraint "balances_pkey" primary key ("account_id", "asset"));`);
    this.addSql(`create table "beneficiaries" ("id" uuid not null, "customer_id" uuid not null, "holder" jsonb not null, "relationship_type" varchar(255) not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "beneficiaries_pkey" primary key ("id"));`);
    this.addSql(`create table "customers" ("id" uuid not null, "name" varchar(255) not null, "created_at" timestamptz(3) not null, constraint "customers_pkey" primary key ("id"));`);
    this.addSql(`create table "events" ("id" uuid not null, "customer_id" uuid not null, "type" varchar(255) not null, "resource_type" varchar(255) not null, "resource_id" uuid not null, "payload" jsonb not null, "dedupe_key" varchar(255) not null, "at_time" timestamptz(3) not null, "created_at" timestamptz(3) not null, constraint "events_pkey" primary key ("id"));`);
    this.addSql(`create index "events_resource_id_index" on "events" ("resource_id");`);
    this.addSql(`alter table "events" add constraint "events_dedupe_key_unique" unique ("dedupe_key");`);
    this.addSql(`create table "idempotency_keys" ("customer_id" uuid not null, "key" uuid not null, "request_hash" varchar(255) not null, "state" varchar(255) not null, "response_status" int null, "response_body" jsonb null, "created_at" timestamptz(3) not null, "expires_at" timestamptz(3) not null, constraint "idempotency_keys_pkey" primary key ("customer_id", "key"));`);
    this.addSql(`create index "idempotency_keys_expires_at_index" on "idempotency_keys" ("expires_at");`);
    this.addSql(`create table "inbound_payments" ("id" uuid not null, "operation_id" uuid not null, "customer_id" uuid not null, "amount" numeric(38,6) not null, "asset" varchar(255) not null, "end_to_end_id" varchar(255) not null, "created_at" timestamptz(3) not null, constraint "inbound_payments_pkey" primary key ("id"));`);
    this.addSql(`create index "inbound_payments_operation_id_index" on "inbound_payments" ("operation_id");`);
    this.addSql(`alter table "inbound_payments" add constraint "inbound_payments_end_to_end_id_unique" unique ("end_to_end_id");`);
    this.addSql(`create table "ledger_entries" ("id" uuid not null, "transaction_id" uuid not null, "account_id" uuid null, "book" varchar(255) not null, "asset" varchar(255) not null, "amount" numeric(38,6) not null, "created_at" timestamptz(3) not null, constraint "ledger_entries_pkey" primary key ("id"));`);
    this.addSql(`create index "ledger_entries_transaction_id_index" on "ledger_entries" ("transaction_id");`);
    this.addSql(`create index "ledger_entries_account_id_index" on "ledger_entries" ("account_id");`);
    this.addSql(`create table "ledger_transactions" ("id" uuid not null, "key" varchar(255) not null, "operation_id" uuid null, "description" varchar(255) not null, "created_at" timestamptz(3) not null, constraint "ledger_transactions_pkey" primary key ("id"));`);
    this.addSql(`alter table "ledger_transactions" add constraint "ledger_transactions_key_unique" unique ("key");`);
    this.addSql(`create index "ledger_transactions_operation_id_index" on "ledger_transactions" ("operation_id");`);
    this.addSql(`create table "operations" ("id" uuid not null, "customer_id" uuid not null, "account_id" uuid not null, "type" varchar(255) not null, "status" varchar(255) not null, "states" jsonb not null, "intent" jsonb not null, "quote_id" uuid not null, "source_asset" varchar(255) not null, "source_amount" numeric(38,6) not null, "target_asset" varchar(255) not null, "target_amount" numeric(38,6) not null, "target_account_id" uuid null, "fees" jsonb not null, "transactions" jsonb not null, "tags" jsonb not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "operations_pkey" primary key ("id"));`);
    this.addSql(`alter table "operations" add constraint "operations_quote_id_unique" unique ("quote_id");`);
    this.addSql(`create table "payment_instructions" ("id" uuid not null, "beneficiary_id" uuid not null, "customer_id" uuid not null, "asset" varchar(255) not null, "rail" varchar(255) not null, "dict_key_type" varchar(255) not null, "dict_key" varchar(255) not null, "status" varchar(255) not null, "states" jsonb not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "payment_instructions_pkey" primary key ("id"));`);
    this.addSql(`create index "payment_instructions_beneficiary_id_index" on "payment_instructions" ("beneficiary_id");`);
    this.addSql(`create table "quotes" ("id" uuid not null, "customer_id" uuid not null, "account_id" uuid not null, "source_asset" varchar(255) not null, "source_amount" numeric(38,6) not null, "target_asset" varchar(255) not null, "target_amount" numeric(38,6) not null, "mid_rate" varchar(255) not null, "effective_rate" varchar(255) not null, "spread" varchar(255) not null, "fee_amount" numeric(38,6) null, "expires_at" timestamptz(3) not null, "consumed_at" timestamptz(3) null, "consumed_by" uuid null, "created_at" timestamptz(3) not null, constraint "quotes_pkey" primary key ("id"));`);
    this.addSql(`alter table "quotes" add constraint "quotes_consumed_by_unique" unique ("consumed_by");`);
    this.addSql(`create table "signing_keys" ("kid" varchar(255) not null, "private_pem" text not null, "public_pem" text not null, "created_at" timestamptz(3) not null, constraint "signing_keys_pkey" primary key ("kid"));`);
    this.addSql(`create table "ubos" ("id" uuid not null, "account_id" uuid not null, "customer_id" uuid not null, "name" varchar(255) not null, "tax_id" jsonb not null, "address" jsonb not null, "ownership_percentage" double precision null, "status" varchar(255) not null, "states" jsonb not null, "created_at" timestamptz(3) not null, "updated_at" timestamptz(3) not null, constraint "ubos_pkey" primary key ("id"));`);
    this.addSql(`create index "ubos_account_id_index" on "ubos" ("account_id");`);
    this.addSql(`create table "workflow_starts" ("workflow_id" varchar(255) not null, "workflow_type" varchar(255) not null, "args" jsonb not null, "search_attributes" jsonb not null, "created_at" timestamptz(3) not null, constraint "workflow_starts_pkey" primary key ("workflow_id"));`);
    this.addSql(`alter table "balances" add constraint "balances_available_non_negative" check ("available" >= 0);`);
    this.addSql(`alter table "balances" add constraint "balances_held_non_negative" check ("held" >= 0);`);
    this.addSql(`create index "accounts_list_index" on "accounts" ("customer_id", "created_at", "id");`);
    this.addSql(`create index "operations_list_index" on "operations" ("customer_id", "created_at", "id");`);
    this.addSql(`create index "beneficiaries_list_index" on "beneficiaries" ("customer_id", "created_at", "id");`);
    this.addSql(`create index "quotes_account_index" on "quotes" ("customer_id", "account_id");`);
    this.addSql(`create index "events_customer_index" on "events" ("customer_id", "created_at");`);
    this.addSql(`create index "ledger_entries_asset_index" on "ledger_entries" ("asset", "book");`);
    this.addSql(`create index "workflow_starts_created_index" on "workflow_starts" ("created_at");`);
  }

  override async down(): Promise<void> {
    for (const table of ['accounts', 'account_documents', 'api_clients', 'balances', 'beneficiaries', 'customers',
      'events', 'idempotency_keys', 'inbound_payments', 'ledger_entries', 'ledger_transactions', 'operations',
      'payment_instructions', 'quotes', 'signing_keys', 'ubos', 'workflow_starts']) {
      this.addSql(`drop table if exists "${table}" cascade;`);
    }
  }
}
