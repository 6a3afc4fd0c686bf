import { expect } from 'chai';
import { firstRepeatedName } from '../../api/middleware/repeated-names';

describe('firstRepeatedName', () => {
  it('finds a name given twice in one object, at any depth, as a JSON pointer', () => {
    expect(firstRepeatedName('{"a":1,"a":2}')).to.equal('/a');
    expect(firstRepeatedName('{"x":{"v":"1","w":[],"v":"2"}}')).to.equal('/x/v');
    expect(firstRepeatedName('[0,{"k":[{"a":1},{"b":1,"b":2}]}]')).to.equal('/1/k/1/b');
    expect(firstRepeatedName('{"a/b~c":{"d":1,"d":1}}')).to.equal('/a~1b~0c/d');
  });

  it('compares names as JSON reads them: an escape names the same property', () => {
    expect(firstRepeatedName('{"value":1,"\\u0076alue":2}')).to.equal('/value');
    expect(firstRepeatedName('{"a\\"b":1,"a\\u0022b":2}')).to.equal('/a"b');
  });

  it('does not take values, or the same name in other objects, for a repeat', () => {
    expect(firstRepeatedName('{"a":"a","b":"a"}')).to.equal(undefined);
    expect(firstRepeatedName('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}]}')).to.equal(undefined);
    expect(firstRepeatedName('{"a":"\\\\","b":"\\"a\\":","c":"}{,"}')).to.equal(undefined);
    expect(firstRepeatedName('[{"a":1},{"a":1}]')).to.equal(undefined);
    expect(firstRepeatedName(' "a" ')).to.equal(undefined);
    expect(firstRepeatedName('{}')).to.equal(undefined);
  });

  it('shows a name Postgres could not store with U+FFFD in its place, as the schema errors do', () => {
    expect(firstRepeatedName('{"x\\u0000":1,"x\\u0000":2}')).to.equal('/x\ufffd');
  });
});
