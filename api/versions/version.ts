import type { RouteTable } from '../routes/define';
import type { ServiceContext } from '../../services/context';

// The shape of one API version, apart from the list of them (index.ts) so a version module need not import the list.

/** A version is one module that builds its route table; a new version is a new module, not `if`s. */
export interface ApiVersion {
  name: string;
  routes(services: ServiceContext): RouteTable;
}
