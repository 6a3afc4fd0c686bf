'use strict';
// The simulated PSP's state file for one deployment (docs/decisions/0111): a PSP holds one account's history, and a
// deployment must never see another's, so `npm start` gives the simulator one state per database it serves, named
// after that database (server and name), instead of one file in the checkout shared by every database.

const path = require('node:path');

const unsafe = /[^A-Za-z0-9_.-]+/g;

/** `.cambio/psp-simulator/<host>-<port>-<database>.json` under `root`, for the database of `databaseUrl`. */
function simulatorStateFile(root, databaseUrl) {
  const u = new URL(databaseUrl);
  // A unix-socket URL (postgres:///db?host=/var/run/postgresql) names its server in the query.
  const host = u.hostname || u.searchParams.get('host') || 'localhost';
  const port = u.port || '5432';
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres';
  const name = [host, port, database].map((part) => part.replace(unsafe, '_')).join('-');
  return path.join(root, '.cambio', 'psp-simulator', `${name}.json`);
}

module.exports = { simulatorStateFile };
