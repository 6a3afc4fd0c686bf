# One image for the three Cambio processes; the command picks the role (see docker-compose.yml):
#   API (default)   node --max-old-space-size=128 dist/api/main.js  (scripts/lib/node-args.js)
#   worker          node --max-old-space-size=128 dist/worker/main.js  (scripts/lib/node-args.js)
#   migrations      node dist/db/migrate.js
#   operator CLI    node dist/cli/main.js customer create --name Acme --json
# TypeScript is compiled in the build stage; the image runs that JavaScript with production dependencies only
# (Temporal's worker keeps webpack and swc at run time: it bundles the workflows from dist/workflows when it starts).

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist

USER node
EXPOSE 3000
# SIGTERM starts the graceful stop (in-flight requests and activities finish within SHUTDOWN_GRACE_SECONDS, 25 s);
# give the container longer than that before SIGKILL (compose: stop_grace_period).
STOPSIGNAL SIGTERM
CMD ["node", "--max-old-space-size=128", "dist/api/main.js"]
