import { Type } from '@mikro-orm/core';
import { Dec } from '../../domain/money';

// numeric arrives from pg as a string and never passes through Number.
export class MoneyType extends Type<Dec | null, string | null> {
  override convertToDatabaseValue(value: Dec | string | null): string | null {
    if (value === null || value === undefined) return null;
    return typeof value === 'string' ? value : value.toFixed();
  }

  override convertToJSValue(value: string | null): Dec | null {
    return value === null || value === undefined ? null : new Dec(value);
  }

  override compareAsType(): string {
    return 'string';
  }

  override getColumnType(): string {
    return 'numeric(38,6)';
  }
}
