// Temporal's Task Queue Fairness (decision 0072): matching dispatches tasks round-robin across fairness keys, so one
// customer's backlog on a task queue waits behind itself, not in front of others. A workflow's key is inherited by its
// activities and children. Not part of the workflow bundle.
import type { Priority } from '@temporalio/common';

/** The priority of every workflow started for a customer: its fairness key is the customer id (a UUID, < 64 bytes). */
export const customerPriority = (customerId: string | undefined): Priority | undefined =>
  customerId ? { fairnessKey: customerId } : undefined;
