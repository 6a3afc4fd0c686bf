// /openapi.json passes Redocly's linter with its recommended rules (npm run lint:openapi), offline.
import { expect } from 'chai';
import { lintOpenApi } from '../../scripts/lint-openapi';

describe('openapi lint (Redocly, recommended rules)', function () {
  this.timeout(60000);

  it('reports no error and no warning', () => {
    const { status, output } = lintOpenApi();
    // Stylish format: one `line:col  error|warning  rule  message` line per problem.
    const problems = output.split('\n').filter((line) => /^\s*\d+:\d+\s+(error|warning)\s/.test(line));
    expect(problems, output).to.deep.equal([]);
    expect(status, output).to.equal(0);
    expect(output).to.match(/Your API description is valid/);
  });
});
