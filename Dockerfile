# One image for every role: `docker run IMAGE api | worker | migrate`.
# Build: docker build -t voice-assistant-service .
#
# The base image is a build argument so that a release pins it by digest, which a tag does not (a tag moves with
# every rebuild upstream). Look the digest up and pass it:
#   docker buildx imagetools inspect node:24-bookworm-slim --format '{{json .Manifest.Digest}}'
#   docker build --build-arg NODE_IMAGE=node:24-bookworm-slim@sha256:<digest> -t voice-assistant-service .
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The Swagger UI distribution's install script pings Scarf's analytics; package.json denies it (allowScripts) and
# turns it off (scarfSettings), and so does this, for whatever npm version the base image brings.
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
RUN npm run build

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
ENV SCARF_ANALYTICS=false
COPY package.json package-lock.json ./
# Without the embedded PostgreSQL and pino-pretty (optional: development only) and without peer-only packages
# (TypeScript and ts-node, which typeorm and valibot name as optional peers): 194 MB of node_modules instead of 284.
RUN npm ci --omit=dev --omit=optional --omit=peer --no-audit --no-fund

FROM ${NODE_IMAGE}
# pdftotext is the fast path for PDFs (PDFium, shipped as WebAssembly in node_modules, is used without it).
RUN apt-get update \
  && apt-get install -y --no-install-recommends poppler-utils tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
# The code belongs to root and is read-only to the user that runs it: a compromised process cannot rewrite it.
COPY --from=production-dependencies /app/node_modules node_modules
COPY --from=build /app/dist dist
# The English word neighbours the migrations write into the search's related words (libs/database/src/word-neighbours.ts).
COPY libs/database/data libs/database/data
COPY package.json ./
COPY scripts/migrate.js scripts/container-entrypoint.sh scripts/healthcheck.js scripts/
USER node
# 3000: the API (PORT); 3001: a worker's health and metrics (WORKER_PORT); 3002: the API's metrics (METRICS_PORT).
EXPOSE 3000 3001 3002
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "scripts/healthcheck.js"]
ENTRYPOINT ["/usr/bin/tini", "--", "scripts/container-entrypoint.sh"]
CMD ["api"]
