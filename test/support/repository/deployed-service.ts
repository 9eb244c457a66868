// The service as every deployment file must address it (the Dockerfile's HEALTHCHECK, the
// compose file, HAProxy's checks, the Kubernetes probes): the port it listens on and its
// probes' paths.

export const APP_PORT = 3000;
export const LIVE = '/health/live';
export const READY = '/health/ready';
