import { Migration } from '@mikro-orm/migrations';

/**
 * The workflow that recover or redelivery last queued for a delivery (decision 0259): its id ends in a random part
 * (decision 0205) and its outbox row is deleted once it is started, so without it nothing could ask Temporal whether
 * the workflow that holds a delivery's `next_attempt` still runs. Null: none was queued, the delivery's own workflow
 * (`webhook-delivery-<id>`) is the only one.
 */
export class Migration20261205200000DeliveryQueuedWorkflow extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "execution_logs" add column "queued_workflow_id" text null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "execution_logs" drop column "queued_workflow_id";`);
  }
}
