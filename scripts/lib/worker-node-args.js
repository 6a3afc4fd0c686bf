// The Node flags the worker runs with, wherever it is started (npm start, npm run worker, the benches, the test
// processes; the Dockerfile and docker-compose.yml spell the same flag out).
//
// --max-old-space-size=128: the worker's main thread allocates ~14 MB/s of short-lived garbage when saturated
// (activations, pg rows, webhook requests) while its live heap stays under ~70 MB. Left to its default, V8 let the
// heap grow to ~180 MB before collecting it, and the worker's RSS reached 402 MB in bench:webhooks; capped, V8
// collects earlier, the RSS peaked at 307 MB and deliveries/s did not change (docs/decisions.md, Performance).
// A live heap that did outgrow the cap would crash the worker: npm start restarts it and Temporal retries its
// work elsewhere, as for any worker crash.
const WORKER_NODE_ARGS = ['--max-old-space-size=128'];

module.exports = { WORKER_NODE_ARGS };
