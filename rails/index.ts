export { providerRails, railStatus, railsFromConfig, Rails } from './registry';
