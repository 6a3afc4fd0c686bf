// The shape of a body read from its text before it is parsed (api/middleware/body-shape.ts, decision 0360).
import { expect } from 'chai';
import { bodyShapeProblem, MAX_BODY_VALUES } from '../../api/middleware/body-shape';

const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
const values = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => i));

describe('body shape', () => {
  it('takes 16 levels of nesting and refuses 17', () => {
    expect(bodyShapeProblem(nested(16))).to.equal(null);
    expect(bodyShapeProblem(nested(17))).to.equal('is nested too deeply (at most 16 levels)');
    expect(bodyShapeProblem(`{"a":${nested(15)}}`)).to.equal(null);
    expect(bodyShapeProblem(`{"a":${nested(16)}}`)).to.match(/nested too deeply/);
  });

  it(`takes ${MAX_BODY_VALUES} values and refuses one more, or fewer when told`, () => {
    expect(bodyShapeProblem(values(MAX_BODY_VALUES))).to.equal(null);
    expect(bodyShapeProblem(values(MAX_BODY_VALUES + 1))).to.equal(
      `holds too many values (at most ${MAX_BODY_VALUES})`,
    );
    expect(bodyShapeProblem(values(11), 10)).to.match(/too many values/);
    expect(bodyShapeProblem(values(MAX_BODY_VALUES + 1), Infinity)).to.equal(null);
  });

  it('counts nothing inside strings, escaped quotes included', () => {
    const text = JSON.stringify({ a: `${'[{,'.repeat(10_000)} \\" ",[[[` });
    expect(bodyShapeProblem(text)).to.equal(null);
  });
});
