# Countersign: one process serving the console, /api/trpc, /v1 and WS /v1/live (docs/deployment.md).
FROM node:20-slim

# bubblewrap confines approved commands (COUNTERSIGN_EXEC_SANDBOX=auto picks it when user namespaces work);
# tini is PID 1 (below); ca-certificates for https model endpoints, webhooks and SMTP.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap tini ca-certificates \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --loglevel=warn && npm cache clean --force

COPY . .
ENV NEXT_TELEMETRY_DISABLED=1
RUN npx next build

# Never root: the image's `node` user (uid 1000) owns the data directory only.
RUN mkdir -p /data && chown node:node /data
USER node

ENV NODE_ENV=production \
    PORT=3000 \
    HOST=0.0.0.0 \
    COUNTERSIGN_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/v1/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# tini as PID 1 passes `docker stop`'s SIGTERM to the server (which then drains, docs/operations.md)
# and reaps orphans (each sandboxed command's namespace init ends after bubblewrap); exec form, no
# shell or npm in between. Give `docker stop -t` more than COUNTERSIGN_DRAIN_MS (default 30 s).
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--import", "tsx", "server/main.ts"]
