import { expect } from 'chai';
import { CambioError } from '../../domain/errors';

/** The CambioError `fn` throws; fails the test when it throws nothing or anything else. */
export function cambioErrorOf(fn: () => unknown): CambioError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(CambioError);
    return err as CambioError;
  }
  throw new Error('expected a CambioError');
}

/** The code of the CambioError `fn` throws. */
export const codeOf = (fn: () => unknown): string => cambioErrorOf(fn).code;
