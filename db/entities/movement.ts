import { EntitySchema } from '@mikro-orm/core';
import type { Dec } from '../../domain/money';
import { MoneyType } from '../types/money';
import { Tag, tenantFilter, timestamp } from './common';

export const MOVEMENT_DIRECTIONS = ['INFLOW', 'OUTFLOW'] as const;
export type MovementDirection = (typeof MOVEMENT_DIRECTIONS)[number];

/**
 * A settled money movement: one per operation and account side, written in the transaction that completes the
 * operation (db/repositories/movements.ts). Reports aggregate these, never the operations.
 */
export interface Movement {
  operationId: string;
  accountId: string;
  asset: string;
  direction: MovementDirection;
  customerId: string;
  /** Positive; the direction says which way it went. */
  amount: Dec;
  /** The moment the operation reached COMPLETED (its COMPLETED state entry's `createdAt`). */
  completedAt: Date;
  /** The operation's tags. */
  tags: Tag[];
}

export const MovementSchema = new EntitySchema<Movement>({
  name: 'Movement',
  tableName: 'movements',
  filters: tenantFilter,
  properties: {
    operationId: { type: 'uuid', primary: true },
    accountId: { type: 'uuid', primary: true },
    asset: { type: 'string', primary: true },
    direction: { type: 'string', primary: true },
    customerId: { type: 'uuid' },
    amount: { type: MoneyType },
    completedAt: { ...timestamp },
    tags: { type: 'json' },
  },
});

/** Daily totals of movements per customer, UTC day, account, asset, direction and tag set, kept with the movements. */
export interface MovementDay {
  customerId: string;
  day: string;
  accountId: string;
  asset: string;
  direction: MovementDirection;
  /** The tags of the operations counted here (one row per distinct tag set). */
  tags: Tag[];
  sum: Dec;
  count: string;
}

export const MovementDaySchema = new EntitySchema<MovementDay>({
  name: 'MovementDay',
  tableName: 'movement_days',
  filters: tenantFilter,
  properties: {
    customerId: { type: 'uuid', primary: true },
    day: { type: 'date', primary: true },
    accountId: { type: 'uuid', primary: true },
    asset: { type: 'string', primary: true },
    direction: { type: 'string', primary: true },
    tags: { type: 'json', primary: true },
    sum: { type: MoneyType },
    count: { type: 'bigint' },
  },
});
