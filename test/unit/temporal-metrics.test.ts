// The benches' reading of the Temporal dev server's Prometheus counters (bench/lib/temporal-metrics.ts).
import { expect } from 'chai';
import { countsBetween, countsOf, parseSample } from '../../bench/lib/temporal-metrics';

const SCRAPE = `# HELP service_requests service_requests counter
# TYPE service_requests counter
service_requests{namespace="default",operation="RespondWorkflowTaskCompleted",service_name="frontend"} 559
service_requests{namespace="default",operation="RespondWorkflowTaskCompleted",service_name="history"} 559
service_requests{namespace="temporal_system",operation="RespondWorkflowTaskCompleted",service_name="frontend"} 12
service_requests{namespace="default",operation="StartWorkflowExecution",service_name="frontend"} 401
workflow_eager_execution{namespace="default",service_name="history",taskqueue="q",workflowType="operationWorkflow"} 13
workflow_eager_execution{namespace="default",service_name="history",taskqueue="q",workflowType="accountReview"} 8
persistence_requests{namespace="default",operation="CreateTasks",service_name="matching"} 524
persistence_requests{namespace="temporal_system",operation="CreateTasks",service_name="matching"} 97
`;

describe('Temporal metrics for the benches', () => {
  it('parses a sample with its labels, and skips comments', () => {
    expect(parseSample('# TYPE service_requests counter')).to.equal(undefined);
    expect(parseSample('up 1')).to.deep.equal({ metric: 'up', labels: {}, value: 1 });
    expect(parseSample('m{a="x",b="y \\"z\\""} 2.5')).to.deep.equal({
      metric: 'm',
      labels: { a: 'x', b: 'y \\"z\\"' },
      value: 2.5,
    });
  });

  it("counts the application's namespace at the frontend only, summed over the other labels", () => {
    const counts = countsOf(SCRAPE);
    expect(counts['workflow tasks']).to.equal(559);
    expect(counts['starts']).to.equal(401);
    expect(counts['eager starts']).to.equal(21);
    expect(counts['tasks into the backlog']).to.equal(524);
    expect(counts['signals']).to.equal(0);
  });

  it('gives what happened between two readings', () => {
    const before = countsOf(SCRAPE);
    const after = countsOf(
      SCRAPE.replace(
        'StartWorkflowExecution",service_name="frontend"} 401',
        'StartWorkflowExecution",service_name="frontend"} 451',
      ),
    );
    expect(countsBetween(before, after)['starts']).to.equal(50);
    expect(countsBetween(before, after)['workflow tasks']).to.equal(0);
  });
});
