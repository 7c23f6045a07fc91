#!/usr/bin/env node
// The image's HEALTHCHECK: healthy when the process of this container is ready, whichever role it has (the API
// listens on PORT, a worker's health server on WORKER_PORT).
const ports = [process.env.PORT || '3000', process.env.WORKER_PORT || '3001'];
const ready = (port) =>
  fetch(`http://127.0.0.1:${port}/api/health/ready`, { signal: AbortSignal.timeout(2500) }).then(
    (response) => response.ok,
    () => false,
  );
Promise.all(ports.map(ready)).then((answers) => process.exit(answers.some(Boolean) ? 0 : 1));
