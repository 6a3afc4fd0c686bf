import { RouteTable } from '../routes/define';
import type { ServiceContext } from '../../services/context';
import type { ApiVersion } from './version';
import { authRoutes } from '../routes/auth';
import { accountRoutes } from '../routes/accounts';
import { beneficiaryRoutes } from '../routes/beneficiaries';
import { quoteRoutes } from '../routes/quotes';
import { rateRoutes } from '../routes/rates';
import { operationRoutes } from '../routes/operations';
import { operationSandboxRoutes } from '../routes/operation-sandbox';
import { balanceRoutes } from '../routes/balances';
import { subscriptionRoutes } from '../routes/subscriptions';
import { reportRoutes } from '../routes/reports';
import { statementRoutes } from '../routes/statements';
import { eventRoutes } from '../routes/events';
import { inboundPaymentRoutes } from '../routes/inbound-payments';

/** Version 1: the interface of ../shared/spec/interface.md with the decisions in docs/decisions/. */
export const v1: ApiVersion = {
  name: '1',
  routes(services: ServiceContext) {
    const table = new RouteTable({ sandbox: services.config.sandbox });
    authRoutes(table, services);
    accountRoutes(table, services);
    beneficiaryRoutes(table, services);
    quoteRoutes(table, services);
    rateRoutes(table, services);
    operationRoutes(table, services);
    operationSandboxRoutes(table, services);
    balanceRoutes(table);
    subscriptionRoutes(table, services);
    reportRoutes(table);
    statementRoutes(table, services);
    eventRoutes(table, services);
    inboundPaymentRoutes(table, services);
    return table;
  },
};
