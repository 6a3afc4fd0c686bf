// The Node flags the worker and the API run with, wherever they are started (npm start, npm run worker|api, the
// benches, the test processes; the Dockerfile and docker-compose.yml spell the same flags out).
//
// --max-old-space-size=128 for both. Each allocates short-lived garbage fast when busy while its live heap stays
// small, and V8, left to its default, lets the heap grow far before it collects:
// - the worker (~14 MB/s saturated: activations, pg rows, webhook requests; live heap under ~70 MB) reached 402 MB
//   RSS in bench:webhooks; capped, it peaked at 307 MB and deliveries/s did not change (decision 0038);
// - the API grew by 166 to 173 MB while it streamed a CSV statement of 1,000,000 entries (nothing held beyond a
//   page); capped, by 26 to 28 MB, at the same rate (bench:statements, decision 0082).
// A live heap that did outgrow the cap would crash the process: npm start restarts it; the API's clients retry with
// their keys and the worker's work is retried elsewhere, as for any crash.
const WORKER_NODE_ARGS = ['--max-old-space-size=128'];
const API_NODE_ARGS = ['--max-old-space-size=128'];

module.exports = { WORKER_NODE_ARGS, API_NODE_ARGS };
