import { stopStack } from './stack';

// Registered by .mocharc.json: stops the shared stack once every file has run.
export const mochaHooks = {
  async afterAll() {
    await stopStack();
  },
};
