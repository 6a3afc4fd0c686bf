// `npm start` gives the simulated PSP one state per database it serves (decision 0111): a new database never meets
// the Pix, charges and payouts another database's deployment made.
import { expect } from 'chai';
import path from 'node:path';

const { simulatorStateFile } = require('../../scripts/lib/psp-simulator-state');

describe('the simulated PSP state file of npm start', () => {
  const root = '/checkout';
  const file = (url: string): string => simulatorStateFile(root, url);

  it('is named after the database it serves, under .cambio/psp-simulator/', () => {
    expect(file('postgres://postgres@127.0.0.1:5432/cambio')).to.equal(
      path.join(root, '.cambio', 'psp-simulator', '127.0.0.1-5432-cambio.json'),
    );
  });

  it('differs for another database, another server or another port; not for other credentials', () => {
    const base = file('postgres://postgres@127.0.0.1:5432/cambio');
    expect(file('postgres://postgres@127.0.0.1:5432/cambio_new')).to.not.equal(base);
    expect(file('postgres://postgres@db.internal:5432/cambio')).to.not.equal(base);
    expect(file('postgres://postgres@127.0.0.1:5433/cambio')).to.not.equal(base);
    expect(file('postgres://app:secret@127.0.0.1/cambio')).to.equal(base);
  });

  it('keeps unsafe characters out of the file name (a socket path, a quoted name)', () => {
    const socket = file('postgres:///my%20db?host=/var/run/postgresql');
    expect(path.dirname(socket)).to.equal(path.join(root, '.cambio', 'psp-simulator'));
    expect(path.basename(socket)).to.equal('_var_run_postgresql-5432-my_db.json');
    expect(path.basename(file('postgres://h/..%2F..%2Fetc'))).to.not.include('/');
  });
});
