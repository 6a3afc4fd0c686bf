export { providerRails, railStatus, railsFromConfig, Rails } from './registry';
export { CryptoRail } from './crypto/connector';
