import { expect } from 'chai';
import { PageCache } from '../../db/lists/page-copies';

const page = (version: string, bytes: number) => ({ version, body: Buffer.alloc(bytes, 'x') });
// Each key below is one character: 2 bytes counted beside its page.
const KEY = 2;

describe('PageCache', () => {
  it('keeps pages up to its byte budget, dropping the least recently used first', () => {
    const cache = new PageCache(3 * (100 + KEY));
    cache.set('a', page('1', 100));
    cache.set('b', page('1', 100));
    cache.set('c', page('1', 100));
    expect(cache.get('a')?.version).to.equal('1'); // a is now the most recently used
    cache.set('d', page('1', 100));
    expect(cache.get('b')).to.equal(undefined);
    expect(['a', 'c', 'd'].map((k) => cache.get(k) !== undefined)).to.deep.equal([true, true, true]);
    expect(cache.size).to.equal(3 * (100 + KEY));
  });

  it('replaces a key in place and counts only its newest page', () => {
    const cache = new PageCache(1000);
    cache.set('a', page('1', 100));
    cache.set('a', page('2', 300));
    expect(cache.get('a')?.version).to.equal('2');
    expect(cache.size).to.equal(300 + KEY);
    cache.delete('a');
    expect(cache.size).to.equal(0);
  });

  it('keeps nothing larger than its whole budget, and nothing at all with a budget of 0', () => {
    const cache = new PageCache(100);
    cache.set('a', page('1', 50));
    cache.set('b', page('1', 200));
    expect(cache.get('b')).to.equal(undefined);
    expect(cache.get('a')?.version).to.equal('1');
    const none = new PageCache(0);
    none.set('a', page('1', 1));
    expect(none.get('a')).to.equal(undefined);
    expect(none.size).to.equal(0);
  });
});
