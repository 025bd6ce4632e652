/**
 * The web server of a job run by `weir run` (or any embedding that starts it): the REST API in
 * Flink's shapes, Prometheus metrics at `/metrics`, server-sent events at `/events` and the
 * dashboard, and the health routes (`/healthz`, `/readyz`, `/ha`, see health.ts), on 127.0.0.1
 * (or the host of `weir run --web-host`) at a fixed port (`port`, `weir run --web-port`) or else an
 * ephemeral one. Reading needs nothing; anything that changes the job (POST) needs
 * `Authorization: Bearer <token>`, the job's control token. On loopback every request must name
 * the loopback address in its Host header (no DNS rebinding; listener.ts). See docs/rest.md.
 */
import { jobChangelog } from './rest/changelog-route.ts';
import type * as http from 'node:http';
import type { JobClient } from '../api/environment.ts';
import type { JobMaster } from '../cluster/job-master/job-master.ts';
import { everyUnref, systemClock } from '../core/adapters.ts';
import { errorMessage } from '../core/errors.ts';
import { checkToken, readJsonBody, sendJson } from './http-util.ts';
import { healthAnswer } from './health.ts';
import { openWebListener, type WebListener } from './listener.ts';
import { JobMetricsExporter } from './metrics.ts';
import { RateSampler } from './rate-sampler.ts';
import type { Advice } from '../advisor/rules.ts';
import { jobAdvice } from './rest/advice-route.ts';
import { backpressure, vertexBackpressure } from './rest/backpressure-route.ts';
import { barrierFlow } from './rest/barrier-flow.ts';
import { checkpointConfig, checkpointDetails, checkpointsOverview, isDiscarded, statsOf, subtaskDetails, vertexOf } from './rest/checkpoint-routes.ts';
import { HttpError, NotFound } from './rest/errors.ts';
import { jobDetails, jobExceptions, jobsList } from './rest/job-routes.ts';
import type { LiveUpdate } from './rest/responses.ts';
import { SavepointOperations } from './rest/savepoint-operations.ts';
import { taskManagers } from './rest/task-manager-route.ts';
import { dashboardDir, staticFile } from './static-files.ts';
import type { WebJob } from './web-job.ts';

export interface WebServerOptions {
  readonly client: JobClient;
  readonly master: JobMaster;
  /** The job's control token: POST routes require it as a bearer token. */
  readonly token: string;
  /** Milliseconds between samples of rates and backpressure, and between live updates; default 1000. */
  readonly sampleIntervalMs?: number;
  /** Called with the savepoint a `POST /jobs/:id/stop` ended the job with. */
  readonly onStopped?: (location: string) => void;
  /** The port to listen on (127.0.0.1); default 0: an ephemeral port. Ignored when `listener` is given. */
  readonly port?: number;
  /** A port already bound with `openWebListener` (so a taken port is known before the job starts). */
  readonly listener?: WebListener;
}

export type { WebListener } from './listener.ts';

export interface WebServer {
  /** `http://<host>:<port>` (127.0.0.1 unless the listener was bound elsewhere) */
  readonly address: string;
  /** The checkpoint advisor over the job's figures, as `GET /jobs/:id/advice` answers (the control endpoint's `GET /advice` asks here). */
  advice(): Advice;
  /** Keeps the process alive while the server listens (it does not by default: the job does); for replay after a run. */
  hold(): void;
  /** Stops sampling, ends live streams and stops listening. */
  close(): Promise<void>;
}

type Params = readonly string[];
type Handler = (params: Params, body: Record<string, unknown>) => unknown;
interface Route {
  readonly method: 'GET' | 'POST';
  readonly pattern: RegExp;
  readonly handler: Handler;
}

/** Live updates for the dashboard: the job, its checkpoints, backpressure and task managers. */
function liveUpdate(job: WebJob): LiveUpdate {
  const checkpoints = checkpointsOverview(job);
  return {
    job: jobDetails(job),
    checkpoints: { ...checkpoints, history: checkpoints.history.slice(0, 30) },
    backpressure: backpressure(job),
    taskmanagers: taskManagers(job),
  };
}

export async function startWebServer(o: WebServerOptions): Promise<WebServer> {
  if (o.token.length === 0) throw new Error('a web server needs a non-empty control token');
  const sampler = new RateSampler();
  const job: WebJob = { master: o.master, client: o.client, sampler, now: () => systemClock.wallNow() };
  const exporter = new JobMetricsExporter(job);
  const operations = new SavepointOperations(job, o.onStopped ?? (() => {}));
  const streams = new Set<http.ServerResponse>();
  const routes = restRoutes(job, operations);
  const staticDir = dashboardDir();

  const tick = (): void => {
    sampler.sample(o.master.tasks, job.now());
    exporter.update();
    if (streams.size === 0) return;
    const data = `event: update\ndata: ${JSON.stringify(liveUpdate(job))}\n\n`;
    for (const res of streams) res.write(data);
  };
  tick();
  const timer = everyUnref(o.sampleIntervalMs ?? 1000, tick);

  const listener = o.listener ?? (await openWebListener(o.port ?? 0));
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse, pathname: string): Promise<void> => {
    try {
      const health = req.method === 'GET' ? healthAnswer(pathname, listener.role, o.client.metrics().status) : null;
      if (health !== null) return sendJson(res, health.status, health.body);
      if (req.method === 'GET' && pathname === '/metrics') {
        const { contentType, text } = await exporter.scrape();
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(text);
        return;
      }
      if (req.method === 'GET' && pathname === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
        res.write(`event: update\ndata: ${JSON.stringify(liveUpdate(job))}\n\n`);
        streams.add(res);
        req.on('close', () => streams.delete(res));
        return;
      }
      for (const route of routes) {
        const match = route.pattern.exec(pathname);
        if (match === null) continue;
        if (req.method !== route.method) continue;
        if (route.method === 'POST') checkToken(req, o.token);
        const body = route.method === 'POST' ? await readJsonBody(req) : {};
        const params = match.slice(1).map((p) => decodeURIComponent(p));
        const result = route.handler(params, body);
        sendJson(res, route.method === 'POST' ? 202 : 200, result);
        return;
      }
      if (routes.some((r) => r.pattern.test(pathname))) throw new HttpError(405, `${req.method} is not allowed on ${pathname}`);
      if (req.method === 'GET' && !pathname.startsWith('/jobs')) {
        const file = staticFile(staticDir, pathname);
        if (file !== null) {
          res.writeHead(200, {
            'content-type': file.type,
            'content-length': file.body.byteLength,
            'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'",
          });
          res.end(file.body);
          return;
        }
        if (pathname === '/') throw new NotFound(`the dashboard is not built (no ${staticDir}/index.html): run 'npm run build'`);
      }
      throw new NotFound(`no route ${req.method} ${pathname}; see docs/rest.md`);
    } catch (err) {
      if (err instanceof HttpError) sendJson(res, err.status, { errors: [err.message] });
      else sendJson(res, 500, { errors: [errorMessage(err).split('\n')[0]] });
    }
  };

  listener.serve(handle);
  let closing: Promise<void> | null = null;
  return {
    address: listener.address,
    advice: () => jobAdvice(job, job.master.config.jobId),
    hold: () => {
      listener.server.ref();
    },
    close: () =>
      (closing ??= new Promise<void>((resolve) => {
        timer.cancel();
        for (const res of streams) res.end();
        streams.clear();
        void listener.close().then(resolve);
      })),
  };
}

function restRoutes(job: WebJob, operations: SavepointOperations): Route[] {
  const jobId = job.master.config.jobId;
  const seg = '([^/]+)';
  /** A route under `/jobs/:id`: the id is checked, the handler gets the parameters after it. */
  const ofJob = (method: Route['method'], suffix: string, handler: Handler): Route => ({
    method,
    pattern: new RegExp(`^/jobs/${seg}${suffix}$`),
    handler: ([id, ...rest], body) => {
      if (id !== jobId) throw new NotFound(`no job '${id}'; this server shows job '${jobId}'`);
      return handler(rest, body);
    },
  });
  return [
    { method: 'GET', pattern: /^\/jobs$/, handler: () => jobsList(job) },
    ofJob('GET', '', () => jobDetails(job)),
    ofJob('GET', '/checkpoints', () => checkpointsOverview(job)),
    ofJob('GET', '/checkpoints/config', () => checkpointConfig(job)),
    ofJob('GET', `/checkpoints/details/${seg}`, ([cid]) => checkpointDetails(job, cid!)),
    ofJob('GET', `/checkpoints/details/${seg}/subtasks/${seg}`, ([cid, vid]) => subtaskDetails(job, cid!, vid!)),
    ofJob('GET', `/checkpoints/details/${seg}/flow`, ([cid]) => {
      const stats = statsOf(job, cid!);
      return barrierFlow(job.master.config.graph, stats, job.master.traces.get(stats.checkpointId), isDiscarded(job, stats));
    }),
    ofJob('GET', '/backpressure', () => backpressure(job)),
    ofJob('GET', '/changelog', () => jobChangelog(job)),
    ofJob('GET', '/advice', () => jobAdvice(job, jobId)),
    ofJob('GET', `/vertices/${seg}/backpressure`, ([vid]) => vertexBackpressure(job, vertexOf(job, vid!))),
    ofJob('GET', '/exceptions', () => jobExceptions(job)),
    ofJob('GET', '/taskmanagers', () => taskManagers(job)),
    ofJob('POST', '/savepoints', (_, body) => operations.trigger(body)),
    ofJob('GET', `/savepoints/${seg}`, ([rid]) => operations.status(rid!)),
    ofJob('POST', '/stop', (_, body) => operations.stop(body)),
  ];
}
