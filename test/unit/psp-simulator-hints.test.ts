// What `npm start` tells an operator in its ready block about each simulated provider: the CLI runs in another
// terminal, without the variables `npm start` gave the API and the worker, so a command that reads them must be told.
import { expect } from 'chai';
import { ratesProvider } from '../../psp-simulator/rates';

describe('npm start hints for the CLI', () => {
  it('names the RATES_SOURCES `cambio rates` needs to show the rates quotes use', () => {
    const sources = ratesProvider.settings('http://127.0.0.1:4010').RATES_SOURCES;
    const hint = ratesProvider.hint?.(sources);
    expect(hint, 'a hint for the rates provider').to.be.a('string');
    expect(hint).to.include('cambio rates').and.include(`RATES_SOURCES=${sources}`);
    // Without an app id the CLI counts oxr as not configured and shows the sandbox table again.
    expect(hint).to.include('OXR_APP_ID').and.include(ratesProvider.settings('http://127.0.0.1:4010').OXR_APP_ID);
  });
});
