import { expect } from 'chai';
import Decimal from 'decimal.js';
describe('smoke', () => { it('decimal', () => expect(new Decimal('0.1').plus('0.2').toFixed()).to.equal('0.3')); });
