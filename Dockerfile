# One image for the three Cambio processes; the command picks the role (see docker-compose.yml):
#   API (default)   node_modules/.bin/tsx api/main.ts
#   worker          node_modules/.bin/tsx worker/main.ts
#   migrations      node_modules/.bin/tsx db/migrate.ts
# TypeScript runs through tsx at run time, as in development; there is no build step.
FROM node:20-slim

WORKDIR /app
ENV NODE_ENV=production

COPY package.json package-lock.json ./
# Dev dependencies stay out of the image; tsx, Temporal's worker (webpack, swc) and pg are runtime dependencies.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY . .

USER node
EXPOSE 3000
CMD ["node_modules/.bin/tsx", "api/main.ts"]
