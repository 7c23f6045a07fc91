# One image for every role: `docker run IMAGE api | worker | migrate`.
# Build: docker build -t voice-assistant-service .

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY apps apps
COPY libs libs
RUN npm run build

FROM node:20-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# pdftotext is the fast path for PDFs (PDFium, shipped as WebAssembly in node_modules, is used without it).
RUN apt-get update \
  && apt-get install -y --no-install-recommends poppler-utils tini \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
COPY --from=production-dependencies --chown=node:node /app/node_modules node_modules
COPY --from=build --chown=node:node /app/dist dist
COPY --chown=node:node package.json ./
COPY --chown=node:node scripts/migrate.js scripts/container-entrypoint.sh scripts/
USER node
EXPOSE 3000 3001
ENTRYPOINT ["/usr/bin/tini", "--", "scripts/container-entrypoint.sh"]
CMD ["api"]
