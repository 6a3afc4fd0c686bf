import { expect } from 'chai';
import fc from 'fast-check';
import { CambioError } from '../../domain/errors';
import {
  FILTER_OPS,
  FilterNode,
  FilterOp,
  MAX_FILTER_CONDITIONS,
  MAX_FILTER_DEPTH,
  parseFilters,
} from '../../lists/filter-parser';

const cond = (field: string, op: FilterOp, ...values: string[]): FilterNode => ({ kind: 'cond', field, op, values });

function expectInvalid(input: string, pattern: RegExp): CambioError {
  try {
    parseFilters(input);
  } catch (err) {
    expect(err).to.be.instanceOf(CambioError);
    const e = err as CambioError;
    expect(e.code).to.equal('INVALID_FILTER');
    expect(e.message).to.match(pattern);
    return e;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

// --- printer used by the round-trip property: the inverse of the parser ---
function printItem(value: string, inList: boolean): string {
  const needsQuotes = value === '' || /[,;()"]/.test(value) || (inList && value.includes('|'));
  return needsQuotes ? `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"` : value;
}

function print(node: FilterNode, topLevelSemicolons = false): string {
  if (node.kind === 'cond') {
    return `${node.field}[${node.op}]=${node.values.map((v) => printItem(v, node.op === 'in')).join('|')}`;
  }
  // `a;b` at the top level parses to the same AST as and(a,b), so exercise both spellings.
  if (topLevelSemicolons && node.kind === 'and' && node.children.length >= 2) {
    return node.children.map((c) => print(c)).join(';');
  }
  return `${node.kind}(${node.children.map((c) => print(c)).join(',')})`;
}

describe('parseFilters', () => {
  it('treats undefined and empty/blank input as no filter', () => {
    expect(parseFilters(undefined)).to.equal(null);
    expect(parseFilters('')).to.equal(null);
    expect(parseFilters('   ')).to.equal(null);
  });

  it('parses a single condition', () => {
    expect(parseFilters('status[eq]=COMPLETED')).to.deep.equal(cond('status', 'eq', 'COMPLETED'));
  });

  it('parses dotted field names and every operator', () => {
    for (const op of FILTER_OPS) {
      expect(parseFilters(`intent.type[${op}]=SWAP`)).to.deep.equal(cond('intent.type', op, 'SWAP'));
    }
  });

  it('joins top-level conditions with ; into an and node', () => {
    expect(parseFilters('a[eq]=1;b[gt]=2;c[lt]=3')).to.deep.equal({
      kind: 'and',
      children: [cond('a', 'eq', '1'), cond('b', 'gt', '2'), cond('c', 'lt', '3')],
    });
  });

  it('parses nested and/or groups', () => {
    expect(parseFilters('or(and(a[eq]=1,b[eq]=2),c[eq]=3)')).to.deep.equal({
      kind: 'or',
      children: [{ kind: 'and', children: [cond('a', 'eq', '1'), cond('b', 'eq', '2')] }, cond('c', 'eq', '3')],
    });
    expect(parseFilters('and(x[eq]=1);or(y[eq]=2)')).to.deep.equal({
      kind: 'and',
      children: [
        { kind: 'and', children: [cond('x', 'eq', '1')] },
        { kind: 'or', children: [cond('y', 'eq', '2')] },
      ],
    });
  });

  it('splits in values on |', () => {
    expect(parseFilters('intent.type[in]=SWAP|DEPOSIT')).to.deep.equal(cond('intent.type', 'in', 'SWAP', 'DEPOSIT'));
    expect(parseFilters('t[in]=A')).to.deep.equal(cond('t', 'in', 'A'));
  });

  it('keeps | literal outside in lists', () => {
    expect(parseFilters('note[eq]=a|b')).to.deep.equal(cond('note', 'eq', 'a|b'));
  });

  it('reads quoted values holding separators', () => {
    expect(parseFilters('owner.legalName[eq]="Acme, Inc."')).to.deep.equal(cond('owner.legalName', 'eq', 'Acme, Inc.'));
    expect(parseFilters('a[eq]="x;(y)";b[in]="p|q"|r')).to.deep.equal({
      kind: 'and',
      children: [cond('a', 'eq', 'x;(y)'), cond('b', 'in', 'p|q', 'r')],
    });
    expect(parseFilters('a[eq]=""')).to.deep.equal(cond('a', 'eq', ''));
  });

  it('unescapes \\" and \\\\ inside quotes', () => {
    expect(parseFilters('a[eq]="say \\"hi\\""')).to.deep.equal(cond('a', 'eq', 'say "hi"'));
    expect(parseFilters('a[eq]="C:\\\\dir\\\\"')).to.deep.equal(cond('a', 'eq', 'C:\\dir\\'));
  });

  it('keeps spaces and non-ASCII characters of bare values', () => {
    expect(parseFilters('name[eq]=Zoë Smith')).to.deep.equal(cond('name', 'eq', 'Zoë Smith'));
  });

  it('does not URL-decode again', () => {
    expect(parseFilters('a[eq]=x%2Cy')).to.deep.equal(cond('a', 'eq', 'x%2Cy'));
  });

  it('accepts and/or as plain field names', () => {
    expect(parseFilters('and[eq]=1')).to.deep.equal(cond('and', 'eq', '1'));
  });

  describe('errors', () => {
    it('rejects unknown operators, naming them and the position', () => {
      const e = expectInvalid('a[eq]=1;status[like]=x', /position 16: unknown operator 'like' for field 'status'/);
      expect(e.details).to.deep.equal({ position: 16 });
      expectInvalid('a[EQ]=1', /unknown operator 'EQ'/);
      expectInvalid('a[]=1', /unknown operator ''/);
    });

    it('rejects unbalanced parentheses', () => {
      expectInvalid('and(a[eq]=1', /position 12: expected ',' or '\)' to continue and\( opened at position 1/);
      expectInvalid('or(and(a[eq]=1,b[eq]=2)', /opened at position 1/);
      expectInvalid('a[eq]=1)', /unexpected '\)'/);
      expectInvalid('and(a[eq]=1))', /unexpected '\)'/);
    });

    it('rejects trailing garbage', () => {
      expectInvalid('a[eq]=1;', /position 9: expected a condition.*found the end/);
      expectInvalid('a[eq]="x"y', /unexpected 'y' after the quoted value of 'a'/);
      expectInvalid('a[eq]="x""y"', /unexpected '"' after the quoted value/);
      expectInvalid('a[eq]=x(y)', /unexpected '\('/);
    });

    it('rejects empty values', () => {
      expectInvalid('a[eq]=', /empty value for field 'a'/);
      expectInvalid('a[eq]=;b[eq]=1', /position 7: empty value for field 'a'/);
      expectInvalid('a[in]=x||y', /empty value for field 'a'/);
      expectInvalid('a[in]=x|', /empty value/);
    });

    it('rejects malformed conditions and groups', () => {
      expectInvalid('a', /expected '\[' after field 'a'/);
      expectInvalid('a[eq', /expected '\]'/);
      expectInvalid('a[eq]1', /expected '=' after a\[eq\]/);
      expectInvalid('[eq]=1', /position 1: expected a condition/);
      expectInvalid('not(a[eq]=1)', /unknown group 'not\(...\)'/);
      expectInvalid('and()', /and\(...\) needs at least one condition/);
      expectInvalid('or(a[eq]=1,)', /expected a condition/);
      expectInvalid(' a[eq]=1', /position 1: expected a condition/);
      expectInvalid('a..b[eq]=1', /expected '\['/);
    });

    it('rejects stray quotes, unterminated quotes and unknown escapes', () => {
      expectInvalid('a[eq]=ab"c', /unexpected '"' inside the value of 'a'/);
      expectInvalid('a[eq]="abc', /position 7: unterminated quoted value/);
      expectInvalid('a[eq]="a\\nb"', /invalid escape/);
      expectInvalid('a[eq]="abc\\', /invalid escape/);
    });

    it('limits nesting depth', () => {
      const nest = (n: number): string => `${'and('.repeat(n)}a[eq]=1${')'.repeat(n)}`;
      expect(parseFilters(nest(MAX_FILTER_DEPTH))).to.not.equal(null);
      expectInvalid(nest(MAX_FILTER_DEPTH + 1), /nested more than 10 levels/);
      // Deep input must fail fast rather than overflow the stack.
      expectInvalid(nest(100_000), /nested more than 10 levels/);
    });

    it('limits the number of conditions', () => {
      const many = (n: number): string => Array.from({ length: n }, (_, i) => `f${i}[eq]=${i}`).join(';');
      expect(parseFilters(many(MAX_FILTER_CONDITIONS))).to.not.equal(null);
      expectInvalid(many(MAX_FILTER_CONDITIONS + 1), /too many conditions/);
      expectInvalid(`or(${many(MAX_FILTER_CONDITIONS + 1).replace(/;/g, ',')})`, /too many conditions/);
    });

    it('limits in list size', () => {
      const values = Array.from({ length: 101 }, (_, i) => `v${i}`).join('|');
      expectInvalid(`a[in]=${values}`, /too many values for a\[in\]/);
    });
  });

  describe('properties', () => {
    const ident = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,6}$/);
    const field = fc.array(ident, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
    // Mix of plain text, separator-heavy text and arbitrary Unicode so quoting/escaping is exercised.
    const value = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.string({ unit: fc.constantFrom(',', ';', '(', ')', '"', '\\', '|', ' ', 'a'), maxLength: 8 }),
      fc.string({ unit: 'binary', maxLength: 8 }),
    );
    const condArb: fc.Arbitrary<FilterNode> = fc.oneof(
      fc.record({
        kind: fc.constant('cond' as const),
        field,
        op: fc.constantFrom<FilterOp>('eq', 'ne', 'gt', 'gte', 'lt', 'lte'),
        values: fc.tuple(value).map((v) => [...v]),
      }),
      fc.record({
        kind: fc.constant('cond' as const),
        field,
        op: fc.constant<FilterOp>('in'),
        values: fc.array(value, { minLength: 1, maxLength: 4 }),
      }),
    );
    const { node } = fc.letrec<{ node: FilterNode }>((tie) => ({
      node: fc.oneof(
        { depthSize: 'small', maxDepth: 4 },
        condArb,
        fc.record({
          kind: fc.constantFrom('and' as const, 'or' as const),
          children: fc.array(tie('node'), { minLength: 1, maxLength: 3 }),
        }),
      ),
    }));
    const countConds = (n: FilterNode): number =>
      n.kind === 'cond' ? 1 : n.children.reduce((s, c) => s + countConds(c), 0);

    it('parse(print(ast)) equals ast', () => {
      fc.assert(
        fc.property(
          node.filter((n) => countConds(n) <= MAX_FILTER_CONDITIONS),
          fc.boolean(),
          (ast, semicolons) => {
            expect(parseFilters(print(ast, semicolons))).to.deep.equal(ast);
          },
        ),
        { numRuns: 500 },
      );
    });

    it('only ever returns a result or throws INVALID_FILTER', () => {
      const noise = fc.string({
        unit: fc.constantFrom('a', '[', ']', '=', 'eq', 'in', '(', ')', ',', ';', '"', '\\', '|', 'and', 'or'),
        maxLength: 30,
      });
      fc.assert(
        fc.property(fc.oneof(noise, fc.string()), (input) => {
          try {
            parseFilters(input);
          } catch (err) {
            expect(err).to.be.instanceOf(CambioError);
            expect((err as CambioError).code).to.equal('INVALID_FILTER');
          }
        }),
        { numRuns: 1000 },
      );
    });
  });
});
