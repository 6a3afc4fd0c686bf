// The CLI's own one-connection pool, for what runs outside the service context (withServices): the audit log's
// reads and checks, and a command's audit row written on its own. With the session bounds of every application
// connection (decisions 0052, 0228): without them a Postgres that stalls holds the command for ever, as the operator
// waits at a prompt that never comes back.
import { loadConfig } from '../config';
import { openOrm, type Orm } from '../db/orm';
import { sessionSettingsOf } from '../db/session-settings';

export function openCliOrm(): Promise<Orm> {
  const config = loadConfig();
  return openOrm(config.databaseUrl, {
    poolMax: 1,
    session: sessionSettingsOf(config),
    applicationName: 'cambio-cli',
  });
}
