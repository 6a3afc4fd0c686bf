// The worker's workflow bundle: every workflow type Cambio runs.
export * from './instruction-review';
export * from './account-review';
export * from './operation';
export * from '../webhooks/delivery-workflow';
export * from './periodic';
export * from './payment-return';
export * from './crypto-scan';
export * from './charge-cancel';
export * from './hot-wallet';
