import { RouteTable } from '../routes/define';
import type { ServiceContext } from '../services/context';
import type { ApiVersion } from './index';
import { authRoutes } from '../routes/auth';

/** Version 1: the interface of ../shared/spec/interface.md with docs/decisions.md. */
export const v1: ApiVersion = {
  name: '1',
  routes(services: ServiceContext) {
    const table = new RouteTable();
    authRoutes(table, services);
    return table;
  },
};
