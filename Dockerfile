# One image for the three Cambio processes; the command picks the role (see docker-compose.yml):
#   API (default)   node --max-old-space-size=128 dist/api/main.js  (scripts/lib/node-args.js)
#   worker          node --max-old-space-size=128 dist/worker/main.js  (scripts/lib/node-args.js)
#   migrations      node dist/db/migrate.js
#   operator CLI    node dist/cli/main.js customer create --name Acme --json
# TypeScript is compiled in the build stage; the image runs that JavaScript with production dependencies only
# (Temporal's worker package brings webpack and swc, unused here: the workflow bundle is built in the build stage).

# No dependency's install script runs (--ignore-scripts), as on a developer's machine: package.json's allowScripts
# refuses each of them, but the npm of node:20 (10.x) does not read that field and would run them all, as root, one
# of them a downloader (decision 0130).
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build
# The workflow bundle, made here from the same code: a worker reads it (WORKFLOW_BUNDLE_PATH) instead of bundling at
# every start.
RUN node dist/worker/bundle.js dist/workflow-bundle.js

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
ENV WORKFLOW_BUNDLE_PATH=/app/dist/workflow-bundle.js
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist

USER node
EXPOSE 3000
# SIGTERM starts the graceful stop (in-flight requests and activities finish within SHUTDOWN_GRACE_SECONDS, 25 s);
# give the container longer than that before SIGKILL (compose: stop_grace_period).
STOPSIGNAL SIGTERM
CMD ["node", "--max-old-space-size=128", "dist/api/main.js"]
