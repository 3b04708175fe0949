# syntax=docker/dockerfile:1
# The hub as a container: compiled server (dist/), built dashboard (web/dist/), production
# dependencies only. node is the container's main process, so `docker stop` (SIGTERM) reaches
# the hub directly. docs/operations.md, "Production start".

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# As CI does: `npm install` honours the lock file but tolerates other platforms' optional packages.
RUN npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production \
    CHORUS_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/assets ./assets
COPY --from=build /app/models ./models
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
# HTTP; the embedded broker's MQTT and MQTT-over-WebSocket listeners (unused with MQTT_URL).
EXPOSE 8080 1884 8084
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# node itself, not `npm start`: SIGTERM from `docker stop` reaches the hub (compose.yaml adds an init).
CMD ["node", "dist/main.js", "serve"]
